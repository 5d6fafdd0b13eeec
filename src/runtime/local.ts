// The local runtime: harnesses run in the host process and the journal is the only durable state
// ("a plain pod"). Invariants: it never claims memory snapshots, so CanPlace refuses memory-tier
// harnesses on it before anything runs; it keeps at most `maxActors` instances (least recently used
// dropped — they are stateless, so the next turn makes one afresh).
import { forkActor } from "./fork.js";
import type { HarnessDescriptor } from "../gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { DEFAULT_LIMITS } from "../limits/index.js";
import type { ComputeStateName } from "../journal/types.js";
import type { Harness, HarnessFactory } from "../harness/types.js";
import {
  NO_CAPABILITIES,
  type ForkOptions,
  type Incarnation,
  type Runtime,
  type RuntimeCapabilities,
  type SessionSpec,
  type SnapshotKind,
  type SnapshotRef,
} from "./types.js";
import { journalRef } from "../snapshot/ref.js";

export class LocalRuntime implements Runtime {
  readonly name = "local";
  private readonly actors = new Map<string, Harness>();
  private probe: Harness | undefined;

  /** @param maxActors instances kept (limit localActors); the least recently used beyond it is dropped. */
  constructor(
    private readonly factory: HarnessFactory,
    private readonly maxActors = DEFAULT_LIMITS.localActors,
    private readonly digest = "",
  ) {}

  buildDigest(): string {
    return this.digest;
  }

  async capabilities(): Promise<RuntimeCapabilities> {
    return NO_CAPABILITIES;
  }

  async describe(): Promise<HarnessDescriptor> {
    this.probe ??= this.factory();
    return await this.probe.describe();
  }

  async create(spec: SessionSpec): Promise<Incarnation> {
    if (!spec.sessionUid) throw new HostError(ErrorCode.InvalidArgument, "local: create requires a session uid");
    const existing = this.actors.get(spec.sessionUid);
    if (existing) {
      this.actors.delete(spec.sessionUid);
      this.actors.set(spec.sessionUid, existing);
      return this.incarnation(spec.sessionUid, existing, "attached");
    }
    const harness = this.factory();
    this.actors.set(spec.sessionUid, harness);
    for (const oldest of this.actors.keys()) {
      if (this.actors.size <= this.maxActors) break;
      this.actors.delete(oldest);
    }
    return this.incarnation(spec.sessionUid, harness, "created");
  }

  async snapshot(sessionUid: string, kind: SnapshotKind): Promise<SnapshotRef> {
    if (kind === "LOCAL")
      throw new HostError(
        ErrorCode.FailedPrecondition,
        "local: warm (LOCAL) snapshots are not supported; the journal is the durable state — use EXTERNAL",
      );
    // Filesystem-only: the ref names the session to replay; the actor is freed.
    this.actors.delete(sessionUid);
    return journalRef(sessionUid);
  }

  async restore(ref: SnapshotRef, spec: SessionSpec): Promise<Incarnation> {
    if (!ref.local) throw new HostError(ErrorCode.InvalidArgument, "local: snapshot ref is missing its session handle");
    return this.create(spec);
  }

  async fork(ref: SnapshotRef, opts: ForkOptions): Promise<Incarnation> {
    return forkActor(this, ref, opts);
  }

  async ephemeral(): Promise<{ harness: Harness; release(): Promise<void> }> {
    return { harness: this.factory(), release: async () => undefined };
  }

  async stop(sessionUid: string): Promise<void> {
    this.actors.delete(sessionUid);
  }

  async status(sessionUid: string): Promise<ComputeStateName> {
    return this.actors.has(sessionUid) ? "LIVE" : "NONE";
  }

  async close(): Promise<void> {
    this.actors.clear();
  }

  private incarnation(sessionUid: string, harness: Harness, origin: Incarnation["origin"]): Incarnation {
    return { sessionUid, runtime: this.name, worker: `pid:${process.pid}`, address: "", origin, harness };
  }
}
