// The Placer: runs Exec, Resume, Suspend, Fork and Replay for sessions by combining admission, the
// session guard, runtimes, fences and the controller (SPEC §7). Invariants: a refusal (CanPlace,
// descriptor mismatch, busy session) happens before any compute is created or anything is journaled;
// every turn writes under a freshly minted fence; a memory actor receives no history its state
// already holds (I4); a memory actor's lost RAM is reported, never silently restarted from zero.
import type { Message } from "../gen/agentsessions/v1/common_pb.js";
import { Lifecycle_Kind } from "../gen/agentsessions/v1/common_pb.js";
import { execTurn, replaySession, resumeTurn, type ControllerDeps, type ReplayResult, type TurnObserver, type TurnResult } from "../controller/index.js";
import { ev } from "../controller/events.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { Journal, JournalRecord, SessionInfo, SessionMetaInput } from "../journal/types.js";
import type { Incarnation, SnapshotRef } from "../runtime/types.js";
import { admit, type Admission } from "./admission.js";
import type { HarnessEntry, HarnessResolver } from "./harness-entry.js";
import { HistoryCache } from "./history-cache.js";
import { SessionGuard, type SessionOperation } from "./session-guard.js";
import { hasTurns, lastEndSeq, lastOwnSuspend } from "./snapshot-refs.js";

export interface PlacerDeps extends Omit<ControllerDeps, "observer" | "journal"> {
  readonly journal: Journal;
  readonly harnesses: HarnessResolver;
  readonly guard?: SessionGuard;
  readonly history?: HistoryCache;
}

export interface ExecRequest {
  readonly session: string;
  /** Registry name for this turn; default: the session's harness. */
  readonly harness?: string;
  readonly inputs: readonly Message[];
  readonly expectedLastSeq?: number;
  readonly config?: Uint8Array;
  readonly resumeFromSeq?: number;
  readonly observer?: TurnObserver;
  readonly signal: AbortSignal;
}

export interface SuspendResult {
  readonly record: JournalRecord;
  readonly ref: SnapshotRef;
}

export interface ResumeResult {
  readonly turn: TurnResult | undefined;
  readonly record: JournalRecord;
}

export interface ForkRequest {
  readonly parent: string;
  /** 0 = head. */
  readonly atSeq: number;
  /** One entry per child; uid and metadata chosen by the caller. */
  readonly children: readonly SessionMetaInput[];
  readonly signal: AbortSignal;
}

export class Placer {
  readonly guard: SessionGuard;
  readonly history: HistoryCache;

  constructor(private readonly deps: PlacerDeps) {
    this.guard = deps.guard ?? new SessionGuard();
    this.history = deps.history ?? new HistoryCache();
  }

  /** The local guard, then (shared journals) the cross-host session lock; either refusal is ABORTED. */
  private async hold(session: string, op: SessionOperation): Promise<() => Promise<void>> {
    const release = this.guard.acquire(session, op);
    const journal = this.deps.journal;
    if (!journal.tryLockSession) return async () => release();
    try {
      const unlock = await journal.tryLockSession(session);
      if (!unlock) throw new HostError(ErrorCode.SessionBusy, `session ${session} is busy on another host`);
      return async () => {
        try {
          await unlock();
        } finally {
          release();
        }
      };
    } catch (err) {
      release();
      throw err;
    }
  }

  private async session(uid: string): Promise<SessionInfo> {
    const info = await this.deps.journal.getSession(uid);
    if (!info) throw new HostError(ErrorCode.NotFound, `session ${uid} not found`);
    return info;
  }

  private controller(observer?: TurnObserver): ControllerDeps {
    const { journal, model, tools, modelCalls } = this.deps;
    return { journal, model, ...(tools ? { tools } : {}), ...(modelCalls ? { modelCalls } : {}), ...(observer ? { observer } : {}) };
  }

  /** Runs one turn. */
  async exec(req: ExecRequest): Promise<TurnResult> {
    const release = await this.hold(req.session, "exec");
    try {
      const info = await this.session(req.session);
      const entry = this.deps.harnesses.resolve(req.harness || info.harness);
      const admission = await admit(entry, req.signal);
      const inc = await this.incarnate(entry, admission, info);
      const fence = await this.deps.journal.newFence(req.session);
      const head = await this.deps.journal.head(req.session);
      const history = admission.memory ? [] : await this.history.get(this.deps.journal, req.session, head);
      const result = await execTurn(this.controller(req.observer), {
        session: req.session,
        binding: { harness: inc.harness, name: entry.name, descriptor: admission.descriptor },
        fence,
        inputs: req.inputs,
        ...(req.expectedLastSeq !== undefined ? { expectedLastSeq: req.expectedLastSeq } : {}),
        ...(req.config ? { config: req.config } : {}),
        ...(req.resumeFromSeq ? { resumeFromSeq: req.resumeFromSeq } : {}),
        history,
        signal: req.signal,
      });
      if (!admission.memory) this.history.extend(req.session, result.records);
      await this.checkpointAfterTurn(entry, admission, req.session, result);
      return result;
    } finally {
      await release();
    }
  }

  /** Re-drives an interrupted turn (if any) and records RESUME. */
  async resume(session: string, signal: AbortSignal, observer?: TurnObserver): Promise<ResumeResult> {
    const release = await this.hold(session, "resume");
    try {
      const info = await this.session(session);
      const entry = this.deps.harnesses.resolve(info.harness);
      const admission = await admit(entry, signal);
      const inc = await this.incarnate(entry, admission, info);
      const fence = await this.deps.journal.newFence(session);
      const turn = await resumeTurn(this.controller(observer), {
        session,
        binding: { harness: inc.harness, name: entry.name, descriptor: admission.descriptor },
        fence,
        ...(admission.memory ? { history: [] } : {}),
        signal,
      });
      if (turn) await this.checkpointAfterTurn(entry, admission, session, turn);
      const head = await this.deps.journal.head(session);
      const record = await this.deps.journal.append(session, head.seq, fence, ev.lifecycle(Lifecycle_Kind.LIFECYCLE_RESUME));
      observer?.onRecord?.(record);
      return { turn, record };
    } finally {
      await release();
    }
  }

  /** Snapshots the session's compute and records SUSPEND carrying the ref; frees the actor. */
  async suspend(session: string, signal: AbortSignal): Promise<SuspendResult> {
    const release = await this.hold(session, "suspend");
    try {
      const info = await this.session(session);
      const entry = this.deps.harnesses.resolve(info.harness);
      const records = await this.deps.journal.readRange(session);
      const existing = lastOwnSuspend(records, session);
      if (info.computeState === "COLD" && existing && existing.seq === info.lastSeq) {
        return { record: records.at(-1)!, ref: existing.ref };
      }
      const admission = await admit(entry, signal);
      if (admission.memory) await this.requireLiveActor(entry, admission, info, records);
      const ref = await entry.runtime.snapshot(session, "EXTERNAL");
      const fence = await this.deps.journal.newFence(session);
      const head = await this.deps.journal.head(session);
      const record = await this.deps.journal.append(
        session,
        head.seq,
        fence,
        ev.lifecycle(Lifecycle_Kind.LIFECYCLE_SUSPEND, { snapshotLocal: ref.local, snapshotExternalUri: ref.externalUri, snapshotMemory: ref.memory }),
      );
      if (ref.memory) {
        await this.deps.journal.putCheckpoint({ session, seq: record.seq, contentHash: record.contentHash, digest: ref.externalUri, createdAtMs: Date.now() });
      }
      await entry.runtime.stop(session);
      this.history.forget(session);
      return { record, ref };
    } finally {
      await release();
    }
  }

  /** Branches the session at a seq into children (SPEC §7 fork semantics). */
  async fork(req: ForkRequest): Promise<{ children: SessionInfo[]; atSeq: number }> {
    const release = await this.hold(req.parent, "fork");
    try {
      const info = await this.session(req.parent);
      const entry = this.deps.harnesses.resolve(info.harness);
      const admission = await admit(entry, req.signal);
      const head = await this.deps.journal.head(req.parent);
      const atSeq = req.atSeq === 0 ? head.seq : req.atSeq;
      if (atSeq < 1 || atSeq > head.seq) {
        throw new HostError(ErrorCode.InvalidArgument, `fork at seq ${atSeq} is outside the session's records 1..${head.seq}`);
      }
      let ref: SnapshotRef = { local: req.parent, externalUri: "", memory: false, sealed: false };
      if (admission.memory) {
        if (atSeq !== head.seq) {
          // RAM state exists only at the head — or at the newest checkpoint, whose blob captured it
          // (how a lost on-suspend actor is recovered).
          const checkpoint = await this.deps.journal.latestCheckpoint(req.parent);
          const bound = checkpoint?.seq === atSeq ? (await this.deps.journal.readRange(req.parent, atSeq, atSeq))[0] : undefined;
          if (!checkpoint || !bound || bound.contentHash !== checkpoint.contentHash) {
            throw new HostError(
              ErrorCode.Unplaceable,
              `harness "${admission.descriptor.id}" requires REQUIRES_MEMORY_SNAPSHOT, which can only fork at the log head (${head.seq}) or its newest checkpoint${checkpoint ? ` (${checkpoint.seq})` : ""}, not seq ${atSeq}`,
            );
          }
          ref = { local: req.parent, externalUri: checkpoint.digest, memory: true, sealed: false };
        } else {
          ref = await this.memoryForkSource(entry, admission, info, atSeq);
        }
      }
      const children: SessionInfo[] = [];
      const provisioned: string[] = [];
      try {
        for (const meta of req.children) {
          await entry.runtime.fork(ref, { childSessionUid: meta.uid, harnessName: entry.name });
          provisioned.push(meta.uid);
        }
      } catch (err) {
        await Promise.allSettled(provisioned.map((uid) => entry.runtime.stop(uid)));
        throw err;
      }
      for (const meta of req.children) {
        const recs = await this.deps.journal.fork(req.parent, meta.uid, atSeq, { ...meta, parentUid: req.parent, forkSeq: atSeq });
        const marker = recs.at(-1)!;
        if (ref.memory) {
          await this.deps.journal.putCheckpoint({ session: meta.uid, seq: marker.seq, contentHash: marker.contentHash, digest: ref.externalUri, createdAtMs: Date.now() });
        }
        children.push(await this.session(meta.uid));
      }
      return { children, atSeq };
    } finally {
      await release();
    }
  }

  /** Re-executes the session's completed turns on a fresh, session-less harness instance. */
  async replay(session: string, signal: AbortSignal): Promise<ReplayResult> {
    const info = await this.session(session);
    const entry = this.deps.harnesses.resolve(info.harness);
    const descriptor = await entry.runtime.describe(signal);
    const eph = await entry.runtime.ephemeral();
    try {
      return await replaySession({ journal: this.deps.journal }, { session, binding: { harness: eph.harness, name: entry.name, descriptor }, signal });
    } finally {
      await eph.release();
    }
  }

  /** The parent's checkpoint for a memory fork: its SUSPEND ref if cold, else a new SUSPEND. */
  private async memoryForkSource(entry: HarnessEntry, admission: Admission, info: SessionInfo, atSeq: number): Promise<SnapshotRef> {
    const records = await this.deps.journal.readRange(info.uid);
    const own = lastOwnSuspend(records, info.uid);
    if (info.computeState === "COLD" && own && own.seq === atSeq && own.ref.memory) return own.ref;
    await this.requireLiveActor(entry, admission, info, records);
    const ref = await entry.runtime.snapshot(info.uid, "EXTERNAL");
    if (!ref.memory || ref.externalUri === "") {
      throw new HostError(ErrorCode.Unplaceable, `runtime ${entry.runtime.name} produced no external snapshot handle to clone from`);
    }
    const fence = await this.deps.journal.newFence(info.uid);
    const record = await this.deps.journal.append(
      info.uid,
      atSeq,
      fence,
      ev.lifecycle(Lifecycle_Kind.LIFECYCLE_SUSPEND, { snapshotLocal: ref.local, snapshotExternalUri: ref.externalUri, snapshotMemory: true }),
    );
    await this.deps.journal.putCheckpoint({ session: info.uid, seq: record.seq, contentHash: record.contentHash, digest: ref.externalUri, createdAtMs: Date.now() });
    await entry.runtime.stop(info.uid);
    return ref;
  }

  /**
   * The incarnation a turn runs on. Stateless: whatever the runtime gives. Memory: the live actor;
   * or a restore from the session's own SUSPEND when cold; or, when a live actor was lost, a restore
   * from the newest checkpoint if it still covers every completed turn — otherwise a loud refusal.
   */
  private async incarnate(entry: HarnessEntry, admission: Admission, info: SessionInfo): Promise<Incarnation> {
    const spec = { sessionUid: info.uid, harnessName: entry.name };
    if (!admission.memory) return entry.runtime.create(spec);
    if (info.computeState === "COLD") {
      const records = await this.deps.journal.readRange(info.uid);
      const own = lastOwnSuspend(records, info.uid);
      if (own?.ref.memory) return entry.runtime.restore(own.ref, spec);
    }
    const inc = await entry.runtime.create(spec);
    if (inc.origin !== "created") return inc;
    const records = await this.deps.journal.readRange(info.uid);
    if (!hasTurns(records)) return inc;
    return this.recoverLostActor(entry, info, records);
  }

  private async requireLiveActor(entry: HarnessEntry, admission: Admission, info: SessionInfo, records: readonly JournalRecord[]): Promise<void> {
    void admission;
    const status = await entry.runtime.status(info.uid);
    if (status === "LIVE") return;
    if (!hasTurns(records)) {
      await entry.runtime.create({ sessionUid: info.uid, harnessName: entry.name });
      return;
    }
    await this.recoverLostActor(entry, info, records);
  }

  private async recoverLostActor(entry: HarnessEntry, info: SessionInfo, records: readonly JournalRecord[]): Promise<Incarnation> {
    const checkpoint = await this.deps.journal.latestCheckpoint(info.uid);
    const spec = { sessionUid: info.uid, harnessName: entry.name };
    if (checkpoint) {
      const bound = records.find((r) => r.seq === checkpoint.seq);
      if (bound && bound.contentHash === checkpoint.contentHash && lastEndSeq(records) <= checkpoint.seq) {
        return entry.runtime.restore({ local: info.uid, externalUri: checkpoint.digest, memory: true, sealed: false }, spec);
      }
    }
    await entry.runtime.stop(info.uid);
    const at = checkpoint ? `the last good snapshot is at seq ${checkpoint.seq}; \`harnesshost fork --session ${info.uid} --at ${checkpoint.seq}\` recovers a consistent child from it` : "no snapshot of it exists";
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `the live RAM state of memory actor ${info.uid} (harness "${entry.name}", checkpoint policy ${entry.checkpointPolicy}) was lost with its node or host; ${at}`,
    );
  }

  /** every-turn policy: checkpoint the actor bound to the END record of the turn just completed. */
  private async checkpointAfterTurn(entry: HarnessEntry, admission: Admission, session: string, turn: TurnResult): Promise<void> {
    if (!admission.memory || entry.checkpointPolicy !== "every-turn") return;
    const end = turn.records.at(-1);
    if (!end) return;
    const ref = await entry.runtime.snapshot(session, "EXTERNAL");
    if (!ref.memory) return;
    await this.deps.journal.putCheckpoint({ session, seq: end.seq, contentHash: end.contentHash, digest: ref.externalUri, createdAtMs: Date.now() });
  }
}
