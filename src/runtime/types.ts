// The Runtime SPI (docs/protocol.md §7.2): a compute backend bound to one harness. Invariants: capabilities are
// honest (memorySnapshot only when RAM really round-trips); create is idempotent per session; a
// snapshot keeps the actor restorable; fork never leaves a half-made child behind.
import type { HarnessDescriptor } from "../gen/agentsessions/v1/harness_pb.js";
import type { ComputeStateName } from "../journal/types.js";
import type { Log } from "../obs/op-log.js";
import type { Harness } from "../harness/types.js";
import type { SnapshotRef } from "../snapshot/ref.js";

export type SnapshotKind = "LOCAL" | "EXTERNAL";

export type { SnapshotRef } from "../snapshot/ref.js";

export interface RuntimeCapabilities {
  readonly memorySnapshot: boolean;
  readonly cowFork: boolean;
  readonly attest: boolean;
  readonly gpuState: boolean;
}

export const NO_CAPABILITIES: RuntimeCapabilities = {
  memorySnapshot: false,
  cowFork: false,
  attest: false,
  gpuState: false,
};

export interface SessionSpec {
  readonly sessionUid: string;
  /** Registry name of the harness, for diagnostics. */
  readonly harnessName: string;
  /**
   * The logger of the operation placing the actor (request_id, session, harness, turn bound): the
   * runtime's lines about this placement (a node started for it, a restore and its duration) carry
   * them. Default: the runtime's own logger.
   */
  readonly log?: Log;
}

/**
 * How an incarnation's actor came to be: `created` (a fresh instance, no RAM state), `attached` (the
 * live actor that already served this session), `restored` (RAM state loaded from a snapshot).
 */
export type IncarnationOrigin = "created" | "attached" | "restored";

export interface Incarnation {
  readonly sessionUid: string;
  /** "local", "spawned", "remote" or "vm". */
  readonly runtime: string;
  /** Diagnostics: a pid or node address. */
  readonly worker: string;
  /** Where the harness listens ("" when in-process). */
  readonly address: string;
  readonly origin: IncarnationOrigin;
  /** The handle turns run against. */
  readonly harness: Harness;
}

export interface ForkOptions {
  readonly childSessionUid: string;
  readonly harnessName: string;
  /** As SessionSpec.log. */
  readonly log?: Log;
}

export interface Runtime {
  /** "local", "spawned" or "remote". */
  readonly name: string;
  /** Checked at every admission (a remote node may change what it serves). */
  capabilities(signal?: AbortSignal): Promise<RuntimeCapabilities>;
  /** The harness's descriptor, read before any compute is created. */
  describe(signal?: AbortSignal): Promise<HarnessDescriptor>;
  /**
   * "sha256:<hex>" of the harness build this runtime serves (a module's entry file; a remote node's
   * NodeInfo.build_digest as of its last admission); "" when unknown (docs/versioning.md).
   */
  buildDigest?(): string;
  /** Attach to the session's live actor or create a fresh one. Idempotent per session. */
  create(spec: SessionSpec): Promise<Incarnation>;
  /**
   * EXTERNAL: capture the session's actor; memory backends store a blob and keep the actor live. The
   * transfer is bounded by the runtime's snapshot deadline and cancelled when `signal` fires.
   */
  snapshot(sessionUid: string, kind: SnapshotKind, signal?: AbortSignal, log?: Log): Promise<SnapshotRef>;
  /** Bring the session back from a ref: memory backends load the blob (DATA_LOSS if corrupt). */
  restore(ref: SnapshotRef, spec: SessionSpec): Promise<Incarnation>;
  /** A child incarnation: memory backends restore the parent's blob into the child's actor. */
  fork(ref: SnapshotRef, opts: ForkOptions): Promise<Incarnation>;
  /**
   * A harness instance bound to no session (a fresh actor), for replay: replay must never run
   * against a live actor, whose RAM state it would disturb.
   */
  ephemeral(): Promise<{ harness: Harness; release(): Promise<void> }>;
  /** Frees the session's actor (and an idle process). */
  stop(sessionUid: string): Promise<void>;
  status(sessionUid: string): Promise<ComputeStateName>;
  close(): Promise<void>;
}

/** An OS process a runtime owns and an actor lives in (a spawned node, a QEMU): crash tests kill it. */
export interface OwnedProcess {
  readonly pid: number;
  readonly exited: Promise<void>;
  /** SIGKILL, no warning. */
  kill(): void;
}

/** A runtime that can name the process serving a session. */
export interface ProcessOwner {
  processOf(sessionUid: string): OwnedProcess | undefined;
}

export function ownsProcesses(runtime: Runtime): runtime is Runtime & ProcessOwner {
  return typeof (runtime as Partial<ProcessOwner>).processOf === "function";
}

/** The CanPlace rule: refuse exactly a memory-tier harness on a runtime without memory snapshots. */
export function canPlace(requiresMemorySnapshot: boolean, caps: RuntimeCapabilities): boolean {
  return !(requiresMemorySnapshot && !caps.memorySnapshot);
}
