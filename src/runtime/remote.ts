// The remote runtime: a harness node registered by address and run by someone else. Invariants: it
// provisions nothing; it claims memory snapshots only while the node serves harnesshost.v1.Actors,
// re-checked at every admission, so a reference node (no Actors) is stateless-only; its harnesses send
// history tails only while the latest NodeInfo reports incremental_history (docs/protocol.md §8.8).
import { forkActor } from "./fork.js";
import { randomBytes } from "node:crypto";
import type { Client } from "@grpc/grpc-js";
import { status as GrpcStatus } from "@grpc/grpc-js";
import type { HarnessDescriptor } from "../gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { ComputeStateName } from "../journal/types.js";
import { ActorsClient } from "../node/actors-client.js";
import { DEFAULT_NODE_LIMITS, type NodeLimits } from "../node/limits.js";
import { RemoteHarness, dialHarness } from "../node/remote-harness.js";
import type { Harness } from "../harness/types.js";
import type { SnapshotStore } from "../snapshot/store.js";
import { RpcError, parseAddress } from "../wire/index.js";
import { restoreActorFromStore, snapshotActorToStore } from "./node-actors.js";
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
import { DEFAULT_LIMITS } from "../limits/index.js";
import { clipForLog, lazyChild, type Log } from "../obs/op-log.js";

const MEMORY: RuntimeCapabilities = { ...NO_CAPABILITIES, memorySnapshot: true };

export class RemoteRuntime implements Runtime {
  readonly name = "remote";
  private readonly connection: Client;
  private readonly actors: ActorsClient;
  private readonly describer: RemoteHarness;
  private readonly harnesses = new Map<string, RemoteHarness>();
  private memory = false;
  private incremental = false;
  /** Whether the latest NodeInfo offered PutHistory (docs/protocol.md §8.10). */
  private upload = false;
  /** The build digest the latest NodeInfo reported ("" when none, or the node has no Actors). */
  private digest = "";
  /** The node process last seen by NodeInfo: a new one holds no history for anyone. */
  private nodePid: number | undefined;
  /** Whether the node answered at the last admission (undefined before the first): changes are logged. */
  private reachable: boolean | undefined;

  constructor(
    readonly address: string,
    private readonly store: SnapshotStore,
    private readonly limits: NodeLimits = DEFAULT_NODE_LIMITS,
    /** The runtime's own logger (harness, runtime bound); default: nowhere. */
    private readonly log?: Log,
  ) {
    parseAddress(address);
    this.connection = dialHarness(address, limits.eventBytes);
    this.actors = new ActorsClient({ address, limits });
    this.describer = new RemoteHarness({
      ...(log !== undefined ? { log } : {}),
      address,
      session: "",
      connection: this.connection,
      describeTimeoutMs: limits.nodeCallMs,
    });
  }

  /** Memory-capable only if the node answers the Actors service now. */
  async capabilities(signal?: AbortSignal): Promise<RuntimeCapabilities> {
    try {
      const info = await this.actors.nodeInfo(signal ? { signal } : {});
      this.memory = true;
      this.incremental = info.incrementalHistory;
      this.upload = info.incrementalHistory && info.historyUpload;
      this.digest = info.buildDigest;
      if (this.nodePid !== undefined && this.nodePid !== info.pid) {
        this.log?.info(
          { address: this.addressField(), pid: info.pid, previous_pid: this.nodePid },
          "harness node restarted",
        );
        for (const h of this.harnesses.values()) h.forgetHistory();
      }
      this.nodePid = info.pid;
      this.health(true, { pid: info.pid, memory: true, incremental_history: info.incrementalHistory });
    } catch (err) {
      this.incremental = false;
      this.upload = false;
      this.digest = "";
      if (err instanceof RpcError && err.grpcCode === GrpcStatus.UNIMPLEMENTED) {
        this.memory = false;
        this.health(true, { memory: false });
      } else if (
        err instanceof RpcError &&
        (err.grpcCode === GrpcStatus.UNAVAILABLE || err.grpcCode === GrpcStatus.DEADLINE_EXCEEDED)
      ) {
        this.health(false, { call: "Actors.NodeInfo", code: GrpcStatus[err.grpcCode] });
        throw new HostError(ErrorCode.Unavailable, `harness node at ${this.address} is unavailable`, { cause: err });
      } else throw err;
    }
    return this.memory ? MEMORY : NO_CAPABILITIES;
  }

  private addressField(): string {
    return clipForLog(this.address, DEFAULT_LIMITS.logFieldChars);
  }

  /** Logs a change of the node's reachability: connected at info, lost at warn (never every admission). */
  private health(reachable: boolean, fields: Record<string, unknown>): void {
    if (this.reachable === reachable) return;
    const first = this.reachable === undefined;
    this.reachable = reachable;
    if (reachable)
      this.log?.info(
        { address: this.addressField(), ...fields },
        first ? "harness node connected" : "harness node reachable again",
      );
    else this.log?.warn({ address: this.addressField(), ...fields }, "harness node unreachable");
  }

  describe(signal?: AbortSignal): Promise<HarnessDescriptor> {
    return this.describer.describe(signal);
  }

  buildDigest(): string {
    return this.digest;
  }

  private harnessFor(session: string): RemoteHarness {
    let h = this.harnesses.get(session);
    if (!h) {
      h = this.remoteHarness(session);
      this.harnesses.set(session, h);
    }
    return h;
  }

  private remoteHarness(session: string): RemoteHarness {
    const log = this.log;
    return new RemoteHarness({
      ...(log !== undefined
        ? { log: lazyChild(log, () => ({ session: clipForLog(session, DEFAULT_LIMITS.logFieldChars) })) }
        : {}),
      address: this.address,
      session,
      connection: this.connection,
      describeTimeoutMs: this.limits.nodeCallMs,
      limits: this.limits,
      incrementalHistory: () => this.incremental,
      historyUpload: () => (this.upload ? this.actors : undefined),
    });
  }

  async create(spec: SessionSpec): Promise<Incarnation> {
    let origin: Incarnation["origin"] = "created";
    if (this.memory) {
      const live = await this.actors.list();
      if (live.some((a) => a.session === spec.sessionUid)) origin = "attached";
    }
    return {
      sessionUid: spec.sessionUid,
      runtime: this.name,
      worker: this.address,
      address: this.address,
      origin,
      harness: this.harnessFor(spec.sessionUid),
    };
  }

  async snapshot(sessionUid: string, kind: SnapshotKind, signal?: AbortSignal, log?: Log): Promise<SnapshotRef> {
    if (kind === "LOCAL")
      throw new HostError(
        ErrorCode.FailedPrecondition,
        "remote: warm (LOCAL) snapshots are not supported; use EXTERNAL",
      );
    if (!this.memory) return journalRef(sessionUid);
    return this.timed(log, sessionUid, "Actors.SnapshotActor", "actor snapshot taken", signal, () =>
      snapshotActorToStore(this.actors, this.store, sessionUid, signal),
    );
  }

  /** A node call about one session: its duration at debug, its failure at warn with the call's name. */
  private async timed<T>(
    opLog: Log | undefined,
    session: string,
    call: string,
    done: string,
    signal: AbortSignal | undefined,
    body: () => Promise<T>,
  ): Promise<T> {
    const log = opLog?.child({ runtime: this.name }) ?? this.log;
    const began = performance.now();
    try {
      const out = await body();
      if (log?.isLevelEnabled("debug"))
        log.debug({ address: this.addressField(), duration_ms: Math.round(performance.now() - began) }, done);
      return out;
    } catch (err) {
      if (!signal?.aborted && log?.isLevelEnabled("warn"))
        log.warn(
          {
            ...(opLog === undefined ? { session: clipForLog(session, DEFAULT_LIMITS.logFieldChars) } : {}),
            address: this.addressField(),
            call,
            code: err instanceof HostError ? err.code : err instanceof RpcError ? GrpcStatus[err.grpcCode] : "UNKNOWN",
          },
          "node call failed",
        );
      throw err;
    }
  }

  async restore(ref: SnapshotRef, spec: SessionSpec): Promise<Incarnation> {
    if (!ref.memory) return this.create(spec);
    await this.timed(spec.log, spec.sessionUid, "Actors.RestoreActor", "actor restored", undefined, () =>
      restoreActorFromStore(this.actors, this.store, ref, spec.sessionUid),
    );
    const harness = this.harnessFor(spec.sessionUid);
    harness.forgetHistory();
    return {
      sessionUid: spec.sessionUid,
      runtime: this.name,
      worker: this.address,
      address: this.address,
      origin: "restored",
      harness,
    };
  }

  async fork(ref: SnapshotRef, opts: ForkOptions): Promise<Incarnation> {
    return forkActor(this, ref, opts);
  }

  async ephemeral(): Promise<{ harness: Harness; release(): Promise<void> }> {
    const key = `replay-${randomBytes(8).toString("hex")}`;
    const harness = this.remoteHarness(key);
    return {
      harness,
      release: async () => {
        harness.close();
        if (this.memory) await this.actors.drop(key).catch(() => false);
      },
    };
  }

  async stop(sessionUid: string): Promise<void> {
    this.harnesses.get(sessionUid)?.close();
    this.harnesses.delete(sessionUid);
    if (this.memory) await this.actors.drop(sessionUid).catch(() => false);
  }

  async status(sessionUid: string): Promise<ComputeStateName> {
    if (!this.memory) return "LIVE";
    const live = await this.actors.list();
    return live.some((a) => a.session === sessionUid) ? "LIVE" : "NONE";
  }

  async close(): Promise<void> {
    for (const h of this.harnesses.values()) h.close();
    this.harnesses.clear();
    this.describer.close();
    this.actors.close();
    this.connection.close();
  }
}
