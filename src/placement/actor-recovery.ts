// Which actor a session operation runs on, and how a lost memory actor is recovered (docs/protocol.md
// §7.2, §9.6). Invariants: a memory actor receives no history its state already holds (I4); a live
// actor is attached only while this host minted the session's newest fence (once another host moved
// the session on, it is restored from the newest checkpoint instead); an interrupted memory turn is
// re-run from its start state, never on an actor that ran part of it; lost RAM is rebuilt only in the
// every-turn checkpoint window and otherwise reported loudly, never silently restarted from zero.
import { replaySession } from "../controller/index.js";
import type { SessionLog } from "../projection/session-log.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { JournalRecord, SessionInfo } from "../journal/types.js";
import { traced } from "../obs/trace.js";
import type { Log } from "../obs/op-log.js";
import type { Incarnation, SessionSpec, SnapshotRef } from "../runtime/types.js";
import { journalRef, memoryRef } from "../snapshot/ref.js";
import type { Admission } from "./admission.js";
import type { HarnessEntry } from "./harness-entry.js";
import type { PlacementState } from "./placement-state.js";
import type { RecordWindow } from "./record-cache.js";
import type { TurnCheckpoints } from "./turn-checkpoints.js";
import { memoryTurnStart } from "./waits.js";

/** Bound on replaying the un-checkpointed turns of a lost every-turn actor (ms). */
const REBUILD_TIMEOUT_MS = 60_000;

export class ActorRecovery {
  constructor(
    private readonly state: PlacementState,
    private readonly checkpoints: TurnCheckpoints,
  ) {}

  /**
   * The incarnation a turn runs on. Stateless: whatever the runtime gives. Memory: the live actor;
   * or a restore from the session's own SUSPEND when cold; or, when a live actor was lost, a restore
   * from the newest checkpoint if it still covers every completed turn — otherwise a loud refusal.
   */
  async incarnate(
    entry: HarnessEntry,
    admission: Admission,
    info: SessionInfo,
    window: RecordWindow,
    opLog?: Log,
  ): Promise<Incarnation> {
    const started = performance.now();
    const inc = await this.incarnateOnce(entry, admission, info, window, opLog);
    placed(opLog, inc, started);
    return inc;
  }

  private async incarnateOnce(
    entry: HarnessEntry,
    admission: Admission,
    info: SessionInfo,
    window: RecordWindow,
    opLog: Log | undefined,
  ): Promise<Incarnation> {
    const { log } = window;
    const spec = specOf(info.uid, entry.name, opLog);
    if (!admission.memory) return entry.runtime.create(spec);
    if (info.computeState === "COLD") {
      const own = log.lastOwnSuspend;
      if (own?.ref.memory) return this.restoreFrom(entry, own.ref, spec);
    }
    const inc = await entry.runtime.create(spec);
    if (inc.origin === "restored" || (inc.origin === "attached" && !this.state.movedOn(info))) return inc;
    if (!log.hasTurns) return inc;
    return this.recoverLostActor(entry, admission, info, window, opLog);
  }

  /** A fresh actor, replacing any live one. */
  async freshActor(entry: HarnessEntry, session: string, opLog?: Log): Promise<Incarnation> {
    const started = performance.now();
    await entry.runtime.stop(session);
    const inc = await entry.runtime.create(specOf(session, entry.name, opLog));
    placed(opLog, inc, started);
    return inc;
  }

  /** The actor restored from `ref`, replacing any live one (whose RAM may hold a partial turn). */
  async restoredActor(entry: HarnessEntry, session: string, ref: SnapshotRef, opLog?: Log): Promise<Incarnation> {
    const started = performance.now();
    await entry.runtime.stop(session);
    const inc = await this.restoreFrom(entry, ref, specOf(session, entry.name, opLog));
    placed(opLog, inc, started);
    return inc;
  }

  /** Makes sure the session's memory actor is live here (created, or recovered when it was lost). */
  async requireLiveActor(
    entry: HarnessEntry,
    admission: Admission,
    info: SessionInfo,
    window: RecordWindow,
  ): Promise<void> {
    const status = await entry.runtime.status(info.uid);
    if (status === "LIVE" && !this.state.movedOn(info)) return;
    if (!window.log.hasTurns) {
      await entry.runtime.create({ sessionUid: info.uid, harnessName: entry.name });
      return;
    }
    await this.recoverLostActor(entry, admission, info, window);
  }

  /**
   * The live actor's state as a ref when the newest checkpoint is bound to the head record itself:
   * only a turn changes an actor's RAM, and every checkpoint is taken of (or restored into) the live
   * actor at the record it binds (a turn's END, a fork child's marker, a rebuild's END), so nothing
   * has run since and that stored blob already is the state a new snapshot would capture. Call only
   * after requireLiveActor. Undefined when anything was appended after the checkpoint.
   */
  async headCheckpoint(session: string, head: JournalRecord | undefined): Promise<SnapshotRef | undefined> {
    if (!head) return undefined;
    const checkpoint = await this.state.deps.journal.latestCheckpoint(session);
    if (!checkpoint || checkpoint.seq !== head.seq || checkpoint.contentHash !== head.contentHash) return undefined;
    return memoryRef(session, checkpoint.digest);
  }

  /**
   * The ref of the pending memory turn's restart point (a checkpoint, or a non-memory ref for a fresh
   * actor); undefined when no turn is pending; FAILED_PRECONDITION when the turn's start state is gone.
   */
  async pendingTurnStart(entry: HarnessEntry, session: string, log: SessionLog): Promise<SnapshotRef | undefined> {
    const pending = log.pending();
    if (!pending) return undefined;
    const start = await memoryTurnStart(this.state.deps.journal, entry, session, log, pending.execution.executionId);
    switch (start.kind) {
      case "checkpoint":
        return start.ref;
      case "fresh":
      case "stateless":
        return journalRef(session);
      case "none":
        throw new HostError(ErrorCode.FailedPrecondition, start.why);
      default: {
        const exhaustive: never = start;
        throw new Error(`unknown turn start ${String(exhaustive)}`);
      }
    }
  }

  /** Restores a session's actor from a snapshot ref (a `harnesshost.restore` span while tracing). */
  restoreFrom(entry: HarnessEntry, ref: SnapshotRef, spec: SessionSpec): Promise<Incarnation> {
    return traced(
      "harnesshost.restore",
      () => ({
        "harnesshost.session": spec.sessionUid,
        "harnesshost.harness": entry.name,
        "harnesshost.snapshot": ref.externalUri,
      }),
      () => entry.runtime.restore(ref, spec),
    );
  }

  private async recoverLostActor(
    entry: HarnessEntry,
    admission: Admission,
    info: SessionInfo,
    window: RecordWindow,
    opLog?: Log,
  ): Promise<Incarnation> {
    const { log } = window;
    const checkpoint = await this.state.deps.journal.latestCheckpoint(info.uid);
    const spec = specOf(info.uid, entry.name, opLog);
    // No turn ever completed in the lineage: the state between turns is a fresh actor's.
    if (log.lastEndSeq === 0) return entry.runtime.create(spec);
    if (checkpoint) {
      const bound = await window.record(checkpoint.seq);
      if (bound && bound.contentHash === checkpoint.contentHash) {
        const ref = memoryRef(info.uid, checkpoint.digest);
        if (log.lastEndSeq <= checkpoint.seq) return this.restoreFrom(entry, ref, spec);
        if (inCheckpointWindow(entry, log, checkpoint.seq)) {
          opLog?.warn({ checkpoint_seq: checkpoint.seq }, "memory actor lost: rebuilding from its checkpoint");
          return this.rebuildAfterCheckpoint(entry, admission, info, window, checkpoint.seq, ref);
        }
      }
    } else if (info.parentUid === "" && inCheckpointWindow(entry, log, 0)) {
      // The crash fell in the first turn's checkpoint window: the state before it is a fresh actor.
      opLog?.warn({ checkpoint_seq: 0 }, "memory actor lost: rebuilding from a fresh actor");
      return this.rebuildAfterCheckpoint(entry, admission, info, window, 0, undefined);
    }
    await entry.runtime.stop(info.uid);
    opLog?.warn({ checkpoint_seq: checkpoint?.seq ?? 0 }, "memory actor lost beyond its checkpoint window");
    const at = checkpoint
      ? `the last good snapshot is at seq ${checkpoint.seq}; \`harnesshost fork --session ${info.uid} --at ${checkpoint.seq}\` recovers a consistent child from it`
      : "no snapshot of it exists";
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `the live RAM state of memory actor ${info.uid} (harness "${entry.name}", checkpoint policy ${entry.checkpointPolicy}) was lost with its node or host; ${at}`,
    );
  }

  /**
   * every-turn policy, crash between a turn's END and its checkpoint: restore the newest checkpoint (a
   * fresh actor when the first turn's checkpoint was the one lost) and replay the completed turn after
   * it against their recorded effects (no model call, no append, no history the snapshot holds — I1,
   * I5, I4), then checkpoint the rebuilt actor at the last END. A harness that does not reproduce its
   * recorded effects fails loudly (Diverged), never silently.
   */
  private async rebuildAfterCheckpoint(
    entry: HarnessEntry,
    admission: Admission,
    info: SessionInfo,
    window: RecordWindow,
    checkpointSeq: number,
    ref: SnapshotRef | undefined,
  ): Promise<Incarnation> {
    const spec = { sessionUid: info.uid, harnessName: entry.name };
    const inc = ref ? await this.restoreFrom(entry, ref, spec) : await entry.runtime.create(spec);
    try {
      await replaySession(
        { journal: this.state.deps.journal },
        {
          session: info.uid,
          binding: {
            harness: inc.harness,
            name: entry.name,
            descriptor: admission.descriptor,
            digest: admission.digest,
          },
          signal: AbortSignal.timeout(REBUILD_TIMEOUT_MS),
          afterSeq: checkpointSeq,
          noHistory: true,
        },
      );
    } catch (err) {
      await entry.runtime.stop(info.uid);
      throw err;
    }
    await this.checkpointRebuilt(entry, info.uid, await window.record(window.log.lastEndSeq));
    return inc;
  }

  /** Checkpoints a rebuilt actor at the last END; a failure leaves it live (the next turn retries). */
  private async checkpointRebuilt(entry: HarnessEntry, session: string, end: JournalRecord | undefined) {
    try {
      const snap = await entry.runtime.snapshot(session, "EXTERNAL");
      if (end && snap.memory)
        await this.state.deps.journal.putCheckpoint({
          session,
          seq: end.seq,
          contentHash: end.contentHash,
          digest: snap.externalUri,
          createdAtMs: Date.now(),
        });
    } catch (err) {
      // The rebuilt actor is live; the next completed turn checkpoints it again — but say so.
      if (end)
        await this.checkpoints.failed(this.state.opLog(undefined, session, entry.name), entry, session, end.seq, err);
    }
  }
}

function specOf(sessionUid: string, harnessName: string, log: Log | undefined): SessionSpec {
  return log !== undefined ? { sessionUid, harnessName, log } : { sessionUid, harnessName };
}

/** Placement's line for the actor a turn runs on: where (runtime, worker), how it came to be, how long it took. */
function placed(log: Log | undefined, inc: Incarnation, started: number): void {
  if (!log?.isLevelEnabled("debug")) return;
  log.debug(
    {
      runtime: inc.runtime,
      worker: inc.worker,
      origin: inc.origin,
      duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
    },
    "actor placed",
  );
}

/**
 * every-turn policy: exactly one completed turn lies after the newest checkpoint — the last one, whose
 * checkpoint a crash cut off. More (e.g. checkpoints failing on unsnapshottable state) stays loud.
 */
function inCheckpointWindow(entry: HarnessEntry, log: SessionLog, checkpointSeq: number): boolean {
  if (entry.checkpointPolicy !== "every-turn") return false;
  return log.completedAfter(checkpointSeq) === 1;
}
