// The spawned runtime: the host starts and owns harness node processes (over unix sockets) and
// places actors in them; memory snapshots go through the node's Actors service into the host's
// snapshot store. Invariants: capabilities are honest (memorySnapshot=true because RAM state really
// round-trips through the codec); a node with no actors exits after `idleMs`; an actor whose node
// died is reported lost (status NONE, create → "created"), never silently revived; stop's drop is not
// awaited, but nothing places that session again before the node answered it. Harnesses send
// history tails only to a node process that negotiated them, and full histories after a restore.
import { forkActor } from "./fork.js";
import { clipForLog, lazyChild, type Log } from "../obs/op-log.js";
import { DEFAULT_LIMITS } from "../limits/index.js";
import type { HostMetrics } from "../obs/metrics.js";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HarnessDescriptor } from "../gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { ComputeStateName } from "../journal/types.js";
import { DEFAULT_NODE_LIMITS, type NodeLimits } from "../node/limits.js";
import { RemoteHarness } from "../node/remote-harness.js";
import type { Harness, HarnessFactory } from "../harness/types.js";
import { parseDigest, type SnapshotStore } from "../snapshot/store.js";
import { snapshotActorToStore } from "./node-actors.js";
import { NodeProcess } from "./node-process.js";
import {
  NO_CAPABILITIES,
  type ForkOptions,
  type Incarnation,
  type OwnedProcess,
  type Runtime,
  type RuntimeCapabilities,
  type SessionSpec,
  type SnapshotKind,
  type SnapshotRef,
} from "./types.js";

export interface SpawnedRuntimeOptions {
  /** A built-in harness name or a module path; passed to `harnesshost node --harness`. */
  readonly target: string;
  /** Describes the harness in the host process, so admission never starts a process. */
  readonly factory: HarnessFactory;
  readonly snapshots: SnapshotStore;
  /** How long (ms) a node with no actors stays up before it is stopped. */
  readonly idleMs: number;
  /** Deadlines of calls to the node and bounds of its turns; default DEFAULT_NODE_LIMITS. */
  readonly limits?: NodeLimits;
  /** Where node starts and exits are logged (with the harness name); default: nowhere. */
  readonly log?: Log;
  /** Where the node processes are counted (harness_nodes gauge, labelled harnessName). */
  readonly metrics?: HostMetrics;
  readonly harnessName?: string;
  /** The build digest of `target` as loaded for `factory` ("" for a built-in; docs/versioning.md). */
  readonly digest?: string;
}

const MEMORY: RuntimeCapabilities = { ...NO_CAPABILITIES, memorySnapshot: true };

/**
 * How long (ms) a fork's verified blob stays held after a child took it: the next child of the same
 * fork is restored well within it, so k children cost one blob read and hash, not k; afterwards the
 * bytes are released.
 */
const FORK_BLOB_HOLD_MS = 1_000;

export class SpawnedRuntime implements Runtime {
  readonly name = "spawned";
  private node: NodeProcess | undefined;
  private starting: Promise<NodeProcess> | undefined;
  private readonly placed = new Map<string, NodeProcess>();
  /** Drops sent by stop and not yet answered, per session; `named` when only that restored instance can go. */
  private readonly dropping = new Map<string, { readonly done: Promise<void>; readonly named: boolean }>();
  /** The name of each session's restored actor instance on its node (docs/protocol.md §8.5). */
  private readonly instances = new Map<string, string>();
  private readonly harnesses = new Map<string, RemoteHarness>();
  private readonly socketDir = mkdtempSync(join(tmpdir(), "hh-nodes-"));
  private started = 0;
  private probe: Harness | undefined;
  /** The blob the children of a fork in progress restore from (see readBlob). */
  private forkBlob:
    | { readonly digest: string; readonly bytes: Promise<Uint8Array>; users: number; timer: NodeJS.Timeout | undefined }
    | undefined;
  private closed = false;
  /** Whether the last node process exited without being asked to (the next start is a restart). */
  private crashed = false;

  constructor(private readonly opts: SpawnedRuntimeOptions) {}

  /** The logger of a line about one placement: the operation's (plus runtime), else the runtime's own. */
  private lineLog(opLog: Log | undefined): Log | undefined {
    return opLog !== undefined ? opLog.child({ runtime: this.name }) : this.opts.log;
  }

  /** A failed Actors call to the node, at warn with the call's name (the caller decides what it costs). */
  private callFailed(opLog: Log | undefined, call: string, session: string, err: unknown): void {
    const log = opLog ?? this.opts.log;
    if (!log?.isLevelEnabled("warn")) return;
    log.warn(
      {
        ...(opLog !== undefined
          ? { runtime: this.name }
          : { session: clipForLog(session, DEFAULT_LIMITS.logFieldChars) }),
        call,
        code: err instanceof HostError ? err.code : "UNKNOWN",
        reason: clipForLog(err instanceof Error ? err.message : String(err), 4 * DEFAULT_LIMITS.logFieldChars),
      },
      "node call failed",
    );
  }

  buildDigest(): string {
    return this.opts.digest ?? "";
  }

  /** The node process currently serving (for diagnostics and crash tests). */
  get currentNode(): NodeProcess | undefined {
    return this.node?.alive ? this.node : undefined;
  }

  /** The node process serving a session (crash tests kill it). */
  processOf(sessionUid: string): OwnedProcess | undefined {
    const node = this.placed.get(sessionUid);
    if (!node?.alive) return undefined;
    const exited = once(node.child, "exit").then(() => undefined);
    return { pid: node.pid, exited, kill: () => node.kill() };
  }

  async capabilities(): Promise<RuntimeCapabilities> {
    return MEMORY;
  }

  async describe(): Promise<HarnessDescriptor> {
    this.probe ??= this.opts.factory();
    return await this.probe.describe();
  }

  private async ensureNode(opLog?: Log): Promise<NodeProcess> {
    if (this.closed) throw new HostError(ErrorCode.Unavailable, "spawned runtime is closed");
    if (this.node?.alive) return this.node;
    this.starting ??= (async () => {
      try {
        const began = performance.now();
        const node = await NodeProcess.start(
          this.opts.target,
          join(this.socketDir, `node-${++this.started}.sock`),
          this.opts.limits ?? DEFAULT_NODE_LIMITS,
        ).catch((err: unknown) => {
          this.lineLog(opLog)?.warn(
            { target: this.opts.target, reason: err instanceof Error ? err.message : String(err) },
            "harness node failed to start",
          );
          throw err;
        });
        const startedAt = performance.now();
        const restart = this.crashed;
        this.crashed = false;
        this.lineLog(opLog)?.info(
          {
            pid: node.pid,
            target: this.opts.target,
            start_ms: Math.round(startedAt - began),
            ...(restart ? { restart: true } : {}),
          },
          restart ? "harness node restarted" : "harness node started",
        );
        const log = this.opts.log;
        const harnessName = this.opts.harnessName ?? this.opts.target;
        this.opts.metrics?.nodeStarted(harnessName);
        node.child.once("exit", (code, signal) => {
          // An exit this runtime did not ask for (a crash, an OOM kill) is what an operator must see.
          this.opts.metrics?.nodeExited(harnessName);
          const expected = this.closed || node.sessions.size === 0;
          if (!expected) this.crashed = true;
          (expected ? log?.info.bind(log) : log?.warn.bind(log))?.(
            {
              pid: node.pid,
              code,
              signal,
              sessions: node.sessions.size,
              uptime_ms: Math.round(performance.now() - startedAt),
            },
            "harness node exited",
          );
          for (const s of node.sessions) {
            // Only placements still on this node: a session may already live on a newer one.
            if (this.placed.get(s) !== node) continue;
            this.placed.delete(s);
            this.forgetHarness(s);
          }
          if (this.node === node) this.node = undefined;
        });
        this.node = node;
        return node;
      } finally {
        this.starting = undefined;
      }
    })();
    return this.starting;
  }

  private forgetHarness(session: string): void {
    this.harnesses.get(session)?.close();
    this.harnesses.delete(session);
  }

  private place(node: NodeProcess, session: string, origin: Incarnation["origin"]): Incarnation {
    if (node.idleTimer) {
      clearTimeout(node.idleTimer);
      node.idleTimer = undefined;
    }
    node.sessions.add(session);
    this.placed.set(session, node);
    let harness = this.harnesses.get(session);
    if (!harness) {
      harness = this.remoteHarness(node, session);
      this.harnesses.set(session, harness);
    } else if (origin === "restored") harness.forgetHistory();
    return {
      sessionUid: session,
      runtime: this.name,
      worker: `pid:${node.pid}`,
      address: node.address,
      origin,
      harness,
    };
  }

  private remoteHarness(node: NodeProcess, session: string): RemoteHarness {
    const log = this.opts.log;
    return new RemoteHarness({
      ...(log !== undefined
        ? { log: lazyChild(log, () => ({ session: clipForLog(session, DEFAULT_LIMITS.logFieldChars) })) }
        : {}),
      address: node.address,
      session,
      connection: node.connection,
      incrementalHistory: node.incrementalHistory,
      limits: this.opts.limits ?? DEFAULT_NODE_LIMITS,
      historyUpload: () => (node.historyUpload ? node.actors : undefined),
    });
  }

  async create(spec: SessionSpec): Promise<Incarnation> {
    // A turn would create (or find) the node's actor itself, so any drop still in flight goes first.
    await this.dropping.get(spec.sessionUid)?.done;
    const existing = this.placed.get(spec.sessionUid);
    if (existing?.alive) return this.place(existing, spec.sessionUid, "attached");
    // The node's actor will be created by the session's next turn, unnamed.
    this.instances.delete(spec.sessionUid);
    return this.place(await this.ensureNode(spec.log), spec.sessionUid, "created");
  }

  async snapshot(sessionUid: string, kind: SnapshotKind, signal?: AbortSignal, log?: Log): Promise<SnapshotRef> {
    if (kind === "LOCAL")
      throw new HostError(
        ErrorCode.FailedPrecondition,
        "spawned: warm (LOCAL) snapshots are not supported; use EXTERNAL",
      );
    const node = this.placed.get(sessionUid);
    if (!node?.alive)
      throw new HostError(ErrorCode.FailedPrecondition, `spawned: session ${sessionUid} has no live actor to snapshot`);
    const began = performance.now();
    try {
      const ref = await snapshotActorToStore(node.actors, this.opts.snapshots, sessionUid, signal, node.snapshotToFile);
      const line = this.lineLog(log);
      if (line?.isLevelEnabled("debug"))
        line.debug({ pid: node.pid, duration_ms: Math.round(performance.now() - began) }, "actor snapshot taken");
      return ref;
    } catch (err) {
      if (!signal?.aborted) this.callFailed(log, "Actors.SnapshotActor", sessionUid, err);
      throw err;
    }
  }

  async restore(ref: SnapshotRef, spec: SessionSpec): Promise<Incarnation> {
    return this.restoreFrom(ref, spec, false);
  }

  /**
   * The verified blob: a fork's children (restored one after another) share one read and one hash of
   * it, held while a child restores and for FORK_BLOB_HOLD_MS after the last one finished; any other
   * restore reads it afresh. Pair every call with releaseBlob.
   */
  private readBlob(digest: string, forFork: boolean): Promise<Uint8Array> {
    if (!forFork) return this.opts.snapshots.get(digest);
    let held = this.forkBlob?.digest === digest ? this.forkBlob : undefined;
    if (!held) {
      const bytes = this.opts.snapshots.get(digest);
      held = { digest, bytes, users: 0, timer: undefined };
      const entry = held;
      bytes.catch(() => {
        if (this.forkBlob === entry) this.forkBlob = undefined;
      });
      if (this.forkBlob?.timer) clearTimeout(this.forkBlob.timer);
      this.forkBlob = held;
    }
    clearTimeout(held.timer);
    held.timer = undefined;
    held.users += 1;
    return held.bytes;
  }

  private releaseBlob(digest: string, forFork: boolean): void {
    const held = this.forkBlob;
    if (!forFork || held?.digest !== digest) return;
    held.users -= 1;
    if (held.users > 0) return;
    held.timer = setTimeout(() => {
      if (this.forkBlob === held && held.users === 0) this.forkBlob = undefined;
    }, FORK_BLOB_HOLD_MS);
    held.timer.unref();
  }

  private async restoreFrom(ref: SnapshotRef, spec: SessionSpec, forFork: boolean): Promise<Incarnation> {
    if (!ref.memory) return this.create(spec);
    // A blob the store keeps as a local file goes to a node that reads files by its path: the node
    // checks it against the digest before installing anything, so the host neither reads, hashes nor
    // sends it (docs/protocol.md §8.9). A missing blob is refused here, before anything starts.
    const file = this.opts.snapshots.localFile?.(ref.externalUri);
    let held = false;
    try {
      // Otherwise read (and verify) the blob before starting anything: a corrupt blob changes nothing.
      // A drop in flight is waited for unless it names an instance: that one can never remove the new
      // instance.
      const pending = this.dropping.get(spec.sessionUid);
      held = file === undefined;
      const [read] = await Promise.all([
        held ? this.readBlob(ref.externalUri, forFork) : undefined,
        pending?.named ? undefined : pending?.done,
      ]);
      const current = this.placed.get(spec.sessionUid);
      const node = current?.alive ? current : await this.ensureNode(spec.log);
      const instance = node.instanceDrops ? randomBytes(8).toString("hex") : "";
      const sha256 = parseDigest(ref.externalUri);
      const began = performance.now();
      let size: number;
      try {
        if (file !== undefined && node.restoreFromFile) {
          size = await node.actors.restoreFile(spec.sessionUid, { ...file, sha256 }, { replace: true, instance });
        } else {
          held = true;
          const bytes = read ?? (await this.readBlob(ref.externalUri, forFork));
          // The store re-hashed the bytes to the digest: the client need not hash them again.
          size = await node.actors.restore(spec.sessionUid, bytes, { replace: true, instance, sha256 });
        }
      } catch (err) {
        this.callFailed(spec.log, "Actors.RestoreActor", spec.sessionUid, err);
        throw err;
      }
      const line = this.lineLog(spec.log);
      if (line?.isLevelEnabled("debug"))
        line.debug(
          { pid: node.pid, bytes: size, file: file !== undefined, duration_ms: Math.round(performance.now() - began) },
          "actor restored",
        );
      this.instances.set(spec.sessionUid, instance);
      return this.place(node, spec.sessionUid, "restored");
    } finally {
      if (held) this.releaseBlob(ref.externalUri, forFork);
    }
  }

  async fork(ref: SnapshotRef, opts: ForkOptions): Promise<Incarnation> {
    // The children of one fork share the blob read (see readBlob).
    const forking = {
      name: this.name,
      create: (spec: SessionSpec) => this.create(spec),
      restore: (r: SnapshotRef, spec: SessionSpec) => this.restoreFrom(r, spec, true),
    };
    return forkActor(forking, ref, opts);
  }

  async ephemeral(): Promise<{ harness: Harness; release(): Promise<void> }> {
    // One fresh actor under a throwaway session key for the whole replay, so a memory harness's
    // turns build on each other exactly as they did live; dropped afterwards.
    const node = await this.ensureNode();
    const key = `replay-${randomBytes(8).toString("hex")}`;
    const harness = this.remoteHarness(node, key);
    node.sessions.add(key);
    return {
      harness,
      release: async () => {
        harness.close();
        if (node.alive) await node.actors.drop(key).catch(() => false);
        node.sessions.delete(key);
        this.scheduleIdle(node);
      },
    };
  }

  async stop(sessionUid: string): Promise<void> {
    const node = this.placed.get(sessionUid);
    const instance = this.instances.get(sessionUid) ?? "";
    this.placed.delete(sessionUid);
    this.instances.delete(sessionUid);
    this.forgetHarness(sessionUid);
    if (!node) return;
    node.sessions.delete(sessionUid);
    if (!node.alive) return this.scheduleIdle(node);
    // Not awaited: the caller's commit already stands. Whatever places this session again waits for
    // the drop first (create always; restore unless the drop names the instance it removes), so it
    // can never remove a newer actor.
    const done: Promise<void> = node.actors.drop(sessionUid, { instance }).then(
      () => this.dropped(sessionUid, done, node),
      (err: unknown) => {
        this.callFailed(undefined, "Actors.DropActor", sessionUid, err);
        this.dropped(sessionUid, done, node);
      },
    );
    this.dropping.set(sessionUid, { done, named: instance !== "" });
  }

  private dropped(sessionUid: string, done: Promise<void>, node: NodeProcess): void {
    if (this.dropping.get(sessionUid)?.done === done) this.dropping.delete(sessionUid);
    this.scheduleIdle(node);
  }

  private scheduleIdle(node: NodeProcess): void {
    if (node.sessions.size > 0 || !node.alive || node.idleTimer) return;
    const stop = () => {
      node.idleTimer = undefined;
      if (node.sessions.size === 0) void node.stop();
    };
    if (this.opts.idleMs === 0) stop();
    else {
      node.idleTimer = setTimeout(stop, this.opts.idleMs);
      node.idleTimer.unref();
    }
  }

  async status(sessionUid: string): Promise<ComputeStateName> {
    return this.placed.get(sessionUid)?.alive ? "LIVE" : "NONE";
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.forkBlob) clearTimeout(this.forkBlob.timer);
    this.forkBlob = undefined;
    for (const h of this.harnesses.values()) h.close();
    this.harnesses.clear();
    const node = this.node;
    this.node = undefined;
    if (node) await node.stop();
    rmSync(this.socketDir, { recursive: true, force: true });
  }
}
