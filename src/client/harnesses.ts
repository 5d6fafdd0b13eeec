// The HarnessRegistry half of `harnesshost/client` (the host's operator port). Invariants: the spec
// is built from the caller's fields and validated by the server, not here; failures are
// HarnessHostError; list fetches page by page as the caller iterates.
import { Resumability } from "../gen/agentsessions/v1/harness_pb.js";
import type {
  HarnessRegistration,
  HarnessRegistry,
  RegisterHarnessResponse,
} from "../gen/agentsessions/v1/harness_registry_pb.js";
import type { MethodsOf, ServiceClient } from "../wire/index.js";
import { call } from "./errors.js";
import { wireOptions, type CallOptions } from "./options.js";

export interface RegisterHarness {
  /** The name sessions use (`exec({ harness })`). */
  readonly name: string;
  /**
   * The version this node serves (docs/versioning.md): registered as `name@version` beside the name's
   * other versions; the newest becomes the default for new sessions. Describe must report it.
   */
  readonly version?: string;
  /** Where the harness node listens: `host:port` or `unix:///path`. */
  readonly address: string;
  /** The tier the node's harness declares. */
  readonly resumability: "STATELESS_REPLAY" | "REQUIRES_MEMORY_SNAPSHOT";
  /** When set, every turn is refused if the node ever describes itself with another id. */
  readonly descriptorId?: string;
}

type Stub = ServiceClient<MethodsOf<typeof HarnessRegistry>>;

export class HarnessesClient {
  /** @internal */
  constructor(
    private readonly stub: () => Stub,
    private readonly defaults: CallOptions,
  ) {}

  /** Registers a remote harness; the same spec again is a no-op, another spec under the name ALREADY_EXISTS. */
  register(p: RegisterHarness, options?: CallOptions): Promise<RegisterHarnessResponse> {
    const spec = {
      placement: { case: "remote" as const, value: { address: p.address } },
      capabilities: { resumability: Resumability[p.resumability] },
      descriptorId: p.descriptorId ?? "",
    };
    const name = p.version !== undefined ? `${p.name}@${p.version}` : p.name;
    return call(() => this.stub().registerHarness({ name, spec }, wireOptions(this.defaults, options)));
  }

  /** A registration; with `observe`, the host also asks the node to describe itself. */
  get(name: string, p: { observe?: boolean } = {}, options?: CallOptions): Promise<HarnessRegistration> {
    return call(() =>
      this.stub().getHarness({ name, observe: p.observe ?? false }, wireOptions(this.defaults, options)),
    );
  }

  /** Every registration (statics included), a page at a time as you iterate. */
  async *list(
    p: { includeRetired?: boolean; pageSize?: number } = {},
    options?: CallOptions,
  ): AsyncGenerator<HarnessRegistration> {
    let pageToken = "";
    do {
      const page = await call(() =>
        this.stub().listHarnesses(
          { pageSize: p.pageSize ?? 0, pageToken, includeRetired: p.includeRetired ?? false },
          wireOptions(this.defaults, options),
        ),
      );
      yield* page.harnesses;
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
  }

  /** Retires a registration: new sessions on it are refused (FAILED_PRECONDITION); statics cannot be retired. */
  retire(name: string, p: { reason?: string } = {}, options?: CallOptions): Promise<HarnessRegistration> {
    return call(() => this.stub().retireHarness({ name, reason: p.reason ?? "" }, wireOptions(this.defaults, options)));
  }

  /**
   * Frees a retired registration's name so it can be registered again with another spec; its sessions
   * stay readable but never run on the new registration. Active: FAILED_PRECONDITION (retire first).
   */
  free(name: string, options?: CallOptions): Promise<HarnessRegistration> {
    return call(() => this.stub().freeHarness({ name }, wireOptions(this.defaults, options)));
  }
}
