// The harness-version half of `harnesshost/client` (docs/versioning.md): upgrade a session (Sessions
// port) and list or retire versions with their pinned sessions (operator port). Invariants: failures
// are HarnessHostError; the host decides every rule (replay check, migration, refusals), never this.
import type { HarnessVersion, HarnessVersions, SessionVersions } from "../gen/harnesshost/v1/versions_pb.js";
import type { MethodsOf, ServiceClient } from "../wire/index.js";
import { call } from "./errors.js";
import { wireOptions, type CallOptions } from "./options.js";

export interface UpgradeResult {
  /** The version the session was pinned to before ("" when it had no turn). */
  readonly fromVersion: string;
  readonly toVersion: string;
  /** Seq of the upgrade record; 0 when the session already was on the version (nothing written). */
  readonly upgradeSeq: bigint;
  /** Completed turns replayed under the new version (stateless tier). */
  readonly replayedTurns: number;
  /** Memory tier: the migrated snapshot the session resumes from. */
  readonly snapshot: string;
}

type SessionStub = ServiceClient<MethodsOf<typeof SessionVersions>>;
type RegistryStub = ServiceClient<MethodsOf<typeof HarnessVersions>>;

export class VersionsClient {
  /** @internal */
  constructor(
    private readonly sessions: () => SessionStub,
    private readonly registry: () => RegistryStub,
    private readonly defaults: CallOptions,
  ) {}

  /**
   * Moves a session to another version of its harness. A replay that diverges is FAILED_PRECONDITION
   * naming the first divergent seq, expected and actual event; the session is then unchanged.
   */
  async upgrade(session: string, toVersion: string, options?: CallOptions): Promise<UpgradeResult> {
    const r = await call(() => this.sessions().upgrade({ session, toVersion }, wireOptions(this.defaults, options)));
    return {
      fromVersion: r.fromVersion,
      toVersion: r.toVersion,
      upgradeSeq: r.upgradeSeq,
      replayedTurns: Number(r.replayedTurns),
      snapshot: r.snapshot,
    };
  }

  /** The versions of one harness ("" for every harness) with the sessions pinned to each. */
  async list(name = "", options?: CallOptions): Promise<HarnessVersion[]> {
    return (await call(() => this.registry().listVersions({ name }, wireOptions(this.defaults, options)))).versions;
  }

  /** Retires one version; refused (FAILED_PRECONDITION, listing them) while sessions are pinned unless `force`. */
  retire(
    name: string,
    version: string,
    p: { reason?: string; force?: boolean } = {},
    options?: CallOptions,
  ): Promise<HarnessVersion> {
    return call(() =>
      this.registry().retireVersion(
        { name, version, reason: p.reason ?? "", force: p.force ?? false },
        wireOptions(this.defaults, options),
      ),
    );
  }
}
