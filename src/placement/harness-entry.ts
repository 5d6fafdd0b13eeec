// What placement knows about a harness it serves: the runtime it is placed on and its policies.
// Invariant: a session's harness name resolves to exactly one entry on this host.
import type { RuntimeKind } from "../runtime/table.js";
import type { Runtime } from "../runtime/types.js";

/** When a memory actor's state is checkpointed (docs/protocol.md §9.4). */
export type CheckpointPolicy = "every-turn" | "on-suspend";

export interface HarnessEntry {
  /** Registry name (what Session.harness holds). */
  readonly name: string;
  /**
   * The version this entry serves, declared by its registration (`x@2`, `--version 2`); admission
   * requires Describe to report it. Undefined: an unversioned entry, which serves whatever version its
   * harness reports (docs/versioning.md).
   */
  readonly version?: string;
  /** Orders versions of one name: the greatest active one is the default for new sessions. */
  readonly since?: number;
  readonly source: "static" | "registered";
  readonly runtime: Runtime;
  /** When set, every admission requires Describe to report this id. */
  readonly descriptorId: string;
  readonly checkpointPolicy: CheckpointPolicy;
  readonly state: "active" | "retired";
  /**
   * The registration declared REQUIRES_MEMORY_SNAPSHOT. Admission places the harness as memory-tier
   * when either the declaration or the live Describe says so (the stricter reading wins), so an
   * address that answers "stateless" cannot talk its way onto a filesystem-only runtime.
   */
  readonly declaredMemory?: boolean;
  /**
   * A registered entry's registration uid. A session created on it records it (annotation
   * harnesshost.dev/harness-uid) and never runs on another registration of the same key.
   */
  readonly registrationUid?: string;
  /**
   * A static entry's `--harness` runtime and target as configured (a built-in name, a module path, a
   * node address or an image directory): what Console.ListHarnessOrigins shows.
   */
  readonly origin?: { readonly runtime: RuntimeKind; readonly target: string };
}

/** Resolves harness names; throws HostError InvalidArgument for an unknown name. */
export interface HarnessResolver {
  resolve(name: string): HarnessEntry;
  /**
   * The entry a session pinned to `pinned` (docs/versioning.md) runs on; without it, resolve(name).
   * FAILED_PRECONDITION when the name has versions but not the pinned one.
   */
  /** The entry serving exactly `version` of `name` (an unversioned entry serves any), if active here. */
  resolveVersion?(name: string, version: string): HarnessEntry | undefined;
  resolvePinned?(
    name: string,
    pinned: { readonly harness: string; readonly version: string } | undefined,
    session: string,
  ): HarnessEntry;
  /** Optional: makes a name registered elsewhere (another host, same database) resolvable here. */
  refresh?(name: string): Promise<void>;
  readonly defaultName: string;
}
