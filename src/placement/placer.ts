// The Placer: runs Exec, Resume, Suspend, Fork and Replay for sessions by combining admission, the
// session guard, runtimes, fences and the controller (docs/protocol.md §7). Invariants: a refusal (CanPlace,
// descriptor mismatch, busy session) happens before any compute is created or anything is journaled;
// every turn writes under a freshly minted fence; a memory actor receives no history its state
// already holds (I4); a memory actor's lost RAM is reported, never silently restarted from zero; a
// live actor is attached only while this host minted the session's newest fence (hosts sharing a
// journal: once another host moved the session on, the actor here is stale and is restored from the
// newest checkpoint instead). Waits (docs/protocol.md §12, see waits.ts): a turn that parks on an approval gate
// is suspended at once; a parked Resume takes zero steps; Approve commits only the decision fact;
// effects emitted during an operation are dispatched after it released the session.
import type { Event, IdentityRef, Message } from "../gen/agentsessions/v1/common_pb.js";
import { Lifecycle_Kind } from "../gen/agentsessions/v1/common_pb.js";
import {
  execTurn,
  replaySession,
  resumeTurn,
  type ControllerDeps,
  type ReplayResult,
  type TurnObserver,
  type TurnResult,
} from "../controller/index.js";
import { planDecision, checkDecisionShape, type ApprovalDecision, type ApprovalRef } from "../controller/approvals.js";
import type { SessionLog } from "../controller/projection.js";
import { checkRecordedVersion, resumeRefusal } from "../controller/turn.js";
import { EffectBatch } from "../effects/batch.js";
import { auditRecord } from "../effects/builtins.js";
import type { EffectRegistry } from "../effects/registry.js";
import { commitPark, LazyTurnStart, memoryTurnStart, refuseInputWhileGated, type TurnStart } from "./waits.js";
import { ev } from "../controller/events.js";
import { upgradeEvent } from "../controller/upgrade-record.js";
import { ErrorCode, HostError, isHostError } from "../errors/index.js";
import { appendUnderNewFence } from "../journal/fenced-append.js";
import type { Journal, JournalRecord, SessionInfo, SessionMetaInput } from "../journal/types.js";
import type { Incarnation, SnapshotRef } from "../runtime/types.js";
import { admit, type Admission } from "./admission.js";
import { ChainCheck } from "./chain-check.js";
import type { HarnessEntry, HarnessResolver } from "./harness-entry.js";
import { checkRegistrationBinding } from "./registration-binding.js";
import { DEFAULT_LIMITS, type Limits } from "../limits/index.js";
import { HistoryCache } from "./history-cache.js";
import { RecordCache, type RecordWindow } from "./record-cache.js";
import { SessionGuard, type SessionOperation } from "./session-guard.js";
import { turnDeadline } from "../controller/turn-deadline.js";
import { RunningTurns } from "./running-turns.js";
import { planWithdrawal } from "../controller/withdraw.js";
import { DEFAULT_NODE_LIMITS } from "../node/limits.js";
import { redactSecrets } from "../errors/redact.js";
import { type Log, silentLog } from "../obs/log.js";
import type { OpContext } from "../obs/context.js";
import { CheckpointHealth, checkpointRisk } from "./checkpoint-health.js";
import type { HostMetrics } from "../obs/metrics.js";
import { annotateSpan, recordSpan, traced } from "../obs/trace.js";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import {
  countTools,
  endTurn,
  failedOutcome,
  gateTool,
  measured,
  secondsSince,
  startTurn,
  type TurnMark,
  waitKindOf,
} from "./op-metrics.js";

/**
 * How long Cancel waits for a cancelled turn to release its session, on this host or on another
 * sharing the journal (ms); past it Cancel answers ABORTED and the caller may retry.
 */
export const CANCEL_WAIT_MS = 10_000;
/** How often Cancel repeats a cross-host cancel request while the session stays held elsewhere (ms). */
const CANCEL_REPEAT_MS = 200;

/**
 * A session pinned to a version of this harness runs its next turn only on that version: a harness
 * that now reports another one is refused before any actor, fence or write (docs/versioning.md).
 */
function refuseOffPin(harness: string, reported: string, log: SessionLog, session: string): void {
  const pin = log.pinnedVersion;
  if (!pin || pin.version === "" || pin.harness !== harness || pin.version === reported) return;
  throw new HostError(
    ErrorCode.FailedPrecondition,
    `session ${session} is pinned to harness "${harness}" version "${pin.version}" but the harness now reports version "${reported}"; move it with \`harnesshost upgrade --session ${session} --to-version ${reported}\``,
  );
}

/** Bound on replaying the un-checkpointed turns of a lost every-turn actor (ms). */
const REBUILD_TIMEOUT_MS = 60_000;

export interface PlacerDeps extends Omit<ControllerDeps, "observer" | "journal" | "effects" | "parking"> {
  readonly journal: Journal;
  readonly harnesses: HarnessResolver;
  readonly guard?: SessionGuard;
  readonly history?: HistoryCache;
  /** Byte budgets of the caches (historyCacheBytes, recordCacheBytes); default: DEFAULT_LIMITS. */
  readonly limits?: Pick<Limits, "historyCacheBytes" | "recordCacheBytes">;
  /** Handlers of typed effects; without it, emitting an effect refuses the commit. */
  readonly effects?: EffectRegistry;
  /** Emit `audit.record` for every committed turn, park and decision (needs its handler). */
  readonly auditTurns?: boolean;
  /** Deadline of one turn (ms; limit turnMs); default DEFAULT_NODE_LIMITS.turnMs. */
  readonly turnMs?: number;
  /** How long Cancel waits for a cancelled turn to release its session (ms); default CANCEL_WAIT_MS. */
  readonly cancelWaitMs?: number;
  /** Where placement logs (lines carry request_id, session, harness, turn); default: nowhere. */
  readonly log?: Log;
  /** Where turns, waits, checkpoints and session operations are counted; default: nowhere. */
  readonly metrics?: HostMetrics;
}

export interface CancelRequest {
  readonly session: string;
  /** When set, the turn to cancel: a Cancel naming a turn that already ended (or was superseded) is a no-op. */
  readonly executionId?: string;
  readonly reason: string;
  readonly identity?: IdentityRef;
}

/**
 * What Cancel did: stopped a turn running on this host (`cancelled`) or on another host sharing the
 * journal (`requested`), withdrew a parked turn's wait (`withdrawn`), or found nothing to cancel (`idle`).
 */
export type CancelOutcome = "cancelled" | "requested" | "withdrawn" | "idle";

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
  readonly ctx?: OpContext;
}

export interface SuspendResult {
  readonly record: JournalRecord;
  readonly ref: SnapshotRef;
}

export interface ResumeResult {
  readonly turn: TurnResult | undefined;
  /** The RESUME record; for a (re-)parked session, the newest record (SUSPEND of the park). */
  readonly record: JournalRecord;
  /** Set when the session is (still or again) parked on an approval gate. */
  readonly parked?: ApprovalRef;
}

export interface UpgradeResult {
  readonly from: string;
  readonly to: string;
  /** The upgrade record's seq; 0 when the session already was on the version (nothing written). */
  readonly upgradeSeq: number;
  readonly replayedTurns: number;
  /** Memory tier: the migrated snapshot's digest. */
  readonly snapshot: string;
}

export interface ApproveResult {
  /** The committed APPROVAL_RESULT (an exact retry returns the existing one). */
  readonly record: JournalRecord;
  readonly existing: boolean;
}

export interface ForkRequest {
  readonly parent: string;
  /** 0 = head. */
  readonly atSeq: number;
  /** One entry per child; uid and metadata chosen by the caller. */
  readonly children: readonly SessionMetaInput[];
  readonly signal: AbortSignal;
  readonly ctx?: OpContext;
}

export class Placer {
  readonly guard: SessionGuard;
  readonly history: HistoryCache;
  /** Whole-session records for suspend, resume, approvals and recovery (byte-bounded). */
  readonly records: RecordCache;
  private readonly minted = new Map<string, number>();
  /** Tamper check: the chain is verified before any operation runs on it (DATA_LOSS otherwise). */
  readonly chain = new ChainCheck();
  /** Per session with a live memory actor on this host: the fence this host minted for it last. */
  private readonly actorFence = new Map<string, number>();

  private readonly turnMs: number;
  private readonly cancelWaitMs: number;
  /** Turns running on this host (exec, resume), for Cancel. */
  private readonly running: RunningTurns;
  private readonly log: Log;
  /** Gates (session, request seq) that parked on this host and are not decided yet (the pending gauge). */
  private readonly openedHere = new Set<string>();
  /** Per-turn checkpoint failures (counted, logged as warn, served by GetSession). */
  readonly checkpointHealth = new CheckpointHealth();

  constructor(private readonly deps: PlacerDeps) {
    this.log = deps.log ?? silentLog;
    this.guard = deps.guard ?? new SessionGuard();
    this.running = new RunningTurns(deps.journal);
    this.cancelWaitMs = deps.cancelWaitMs ?? CANCEL_WAIT_MS;
    this.history = deps.history ?? new HistoryCache((deps.limits ?? DEFAULT_LIMITS).historyCacheBytes);
    this.records = new RecordCache((deps.limits ?? DEFAULT_LIMITS).recordCacheBytes);
    this.turnMs = deps.turnMs ?? DEFAULT_NODE_LIMITS.turnMs;
  }

  /** Mints a fence for the session and remembers it as this host's (see reusableFence). */
  private async mint(session: string): Promise<number> {
    const fence = await this.deps.journal.newFence(session);
    this.rememberMinted(session, fence);
    return fence;
  }

  private rememberMinted(session: string, fence: number): void {
    this.minted.set(session, fence);
    if (this.minted.size > 100_000) this.minted.delete(this.minted.keys().next().value!);
  }

  /**
   * Mints a fence and appends one lifecycle record under it (plus, for a memory ref, the checkpoint
   * bound to it) in one durable commit where the journal can; the placement caches learn the record.
   */
  private async commitLifecycle(
    session: string,
    head: number,
    event: Event,
    checkpointDigest?: string,
  ): Promise<{ fence: number; record: JournalRecord }> {
    const { fence, records } = await appendUnderNewFence(
      this.deps.journal,
      session,
      head,
      [event],
      checkpointDigest !== undefined ? { checkpointDigest } : {},
    );
    this.rememberMinted(session, fence);
    this.chain.noteAppended(session, records);
    this.records.noteAppended(session, records);
    return { fence, record: records[0]! };
  }

  /**
   * A turn may keep writing under the fence this host minted last, while it is still the session's
   * current fence: nobody has been authorised to write since, and this host's previous writer is done
   * (it held the session guard). That saves a durable write per turn; any other mint forces a new one.
   */
  private async turnFence(info: SessionInfo): Promise<number> {
    if (info.fence > 0 && this.minted.get(info.uid) === info.fence) return info.fence;
    return this.mint(info.uid);
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

  /**
   * Resolves a session's harness, first loading it if it was registered on another host sharing the
   * journal: the version the session is pinned to (docs/versioning.md), or the default when it has none.
   */
  private async resolveHarness(name: string, log: SessionLog, info: SessionInfo): Promise<HarnessEntry> {
    await this.deps.harnesses.refresh?.(name);
    const resolver = this.deps.harnesses;
    const entry = resolver.resolvePinned
      ? resolver.resolvePinned(name, log.pinnedVersion, info.uid)
      : resolver.resolve(name);
    // A session never runs on a later registration of the key it was created on (a freed name).
    checkRegistrationBinding(entry, info);
    return entry;
  }

  /** Whether another host minted a fence for the session since this host's live actor last ran it. */
  private movedOn(info: SessionInfo): boolean {
    const mine = this.actorFence.get(info.uid);
    return mine !== undefined && mine !== info.fence;
  }

  private async session(uid: string): Promise<SessionInfo> {
    const info = await this.deps.journal.getSession(uid);
    if (!info) throw new HostError(ErrorCode.NotFound, `session ${uid} not found`);
    return info;
  }

  private controller(observer?: TurnObserver, waits: Pick<ControllerDeps, "effects" | "parking"> = {}): ControllerDeps {
    const { journal, model, tools, toolPolicy, modelCalls } = this.deps;
    return {
      journal,
      model,
      ...(tools ? { tools } : {}),
      ...(toolPolicy ? { toolPolicy } : {}),
      ...(modelCalls ? { modelCalls } : {}),
      ...(observer ? { observer } : {}),
      ...waits,
    };
  }

  /** The effects of one operation (none without a registry). */
  private effectBatch(session: string): EffectBatch | undefined {
    return this.deps.effects ? new EffectBatch(this.deps.effects, session) : undefined;
  }

  private audit(
    batch: EffectBatch | undefined,
    rec: JournalRecord | undefined,
    event: string,
    detail: Record<string, string | number>,
  ): void {
    if (!batch || !rec || this.deps.auditTurns !== true || !this.deps.effects?.has(auditRecord.key)) return;
    batch.attach(auditRecord({ event, detail }), rec.seq);
  }

  private dispatching: Promise<unknown> = Promise.resolve();

  /** Dispatches an operation's committed effects after it released the session (never awaited by it). */
  private dispatchEffects(batch: EffectBatch | undefined): void {
    const registry = this.deps.effects;
    if (!registry || !batch || batch.committed.length === 0) return;
    const effects = [...batch.committed];
    const journal = this.deps.journal;
    this.dispatching = this.dispatching.then(async () => {
      const head = await journal.head(batch.session).catch(() => ({ seq: 0, hash: "" }));
      await registry.dispatch(effects, (c) => ({
        session: c.session,
        lastSeq: head.seq,
        lastHash: head.hash,
        committedSeq: c.seq,
      }));
    });
  }

  /** Resolves once every effect dispatched so far has run (or failed). */
  async effectsIdle(): Promise<void> {
    let current: Promise<unknown>;
    do {
      current = this.dispatching;
      await current.catch(() => undefined);
    } while (current !== this.dispatching);
  }

  private async freshActor(entry: HarnessEntry, session: string): Promise<Incarnation> {
    await entry.runtime.stop(session);
    return entry.runtime.create({ sessionUid: session, harnessName: entry.name });
  }

  /** The actor restored from `ref`, replacing any live one (whose RAM may hold a partial turn). */
  private async restoredActor(entry: HarnessEntry, session: string, ref: SnapshotRef): Promise<Incarnation> {
    await entry.runtime.stop(session);
    return this.restoreFrom(entry, ref, { sessionUid: session, harnessName: entry.name });
  }

  /** Parks a turn that stopped at an undecided gate: SUSPEND at the head, actor freed. */
  private async park(
    entry: HarnessEntry,
    session: string,
    fence: number,
    turn: TurnResult & { parked: ApprovalRef },
    start: LazyTurnStart,
    observer: TurnObserver | undefined,
    batch: EffectBatch | undefined,
  ): Promise<TurnResult> {
    const record = await commitPark(
      this.deps.journal,
      entry,
      session,
      fence,
      turn,
      await start.start(turn.executionId),
      observer,
    );
    this.actorFence.delete(session);
    this.history.forget(session);
    this.chain.noteAppended(session, [...turn.records, record]);
    if (this.deps.metrics) {
      this.deps.metrics.waitOpened(waitKindOf(gateTool(turn.records, turn.parked.toolCallId) || "approval"));
      this.openedHere.add(`${session}\u0001${turn.parked.requestSeq}`);
      if (this.openedHere.size > 100_000) this.openedHere.delete(this.openedHere.values().next().value!);
    }
    this.audit(batch, record, "turn.parked", {
      execution_id: turn.parked.executionId,
      tool_call_id: turn.parked.toolCallId,
      request_seq: turn.parked.requestSeq,
    });
    return { ...turn, records: [...turn.records, record], lastSeq: record.seq };
  }

  /**
   * Commits an approval decision (or an answer) for the exact gate tuple: only APPROVAL_RESULT, under
   * a fresh fence at the head; an exact retry returns the committed record. Never runs or resumes anything.
   */
  async approve(session: string, decision: ApprovalDecision): Promise<ApproveResult> {
    return measured(this.deps.metrics, "approve", () =>
      traced(
        "harnesshost.approve",
        () => ({ "harnesshost.session": session, "harnesshost.approved": decision.approved }),
        () => this.approveOp(session, decision),
      ),
    );
  }

  private async approveOp(session: string, decision: ApprovalDecision): Promise<ApproveResult> {
    checkDecisionShape(decision);
    const batch = this.effectBatch(session);
    const release = await this.hold(session, "approve");
    try {
      await this.session(session);
      await this.chain.ensure(this.deps.journal, session);
      const { log, records } = await this.records.window(this.deps.journal, session);
      const plan = planDecision(log, decision);
      if (plan.kind === "existing") return { record: plan.record, existing: true };
      const fence = await this.mint(session);
      const record = await this.deps.journal.append(session, plan.head, fence, plan.event);
      const request = records[decision.requestSeq - 1];
      const requestTs = request?.event.ts;
      if (requestTs)
        recordSpan("harnesshost.approval.wait", timestampMs(requestTs), {
          "harnesshost.session": session,
          "harnesshost.seq.request": decision.requestSeq,
          "harnesshost.seq.decision": record.seq,
          "harnesshost.approved": decision.approved,
        });
      if (this.deps.metrics) {
        const key = `${session}\u0001${decision.requestSeq}`;
        const gate = log.gate(decision);
        this.deps.metrics.waitDecided(
          waitKindOf(gate?.call.tool ?? ""),
          decision.approved,
          secondsSince(records[decision.requestSeq - 1]),
          this.openedHere.delete(key),
        );
      }
      this.chain.noteAppended(session, [record]);
      this.records.noteAppended(session, [record]);
      this.audit(batch, record, decision.approved ? "approval.approved" : "approval.denied", {
        execution_id: decision.executionId,
        tool_call_id: decision.toolCallId,
        request_seq: decision.requestSeq,
      });
      return { record, existing: false };
    } finally {
      await release();
      this.dispatchEffects(batch);
    }
  }

  /** The session's log projection (from the cached record window; for views, no session hold). */
  async sessionLog(session: string): Promise<SessionLog> {
    return (await this.records.window(this.deps.journal, session)).log;
  }

  /** Runs one turn. */
  async exec(req: ExecRequest): Promise<TurnResult> {
    return traced(
      "harnesshost.turn",
      () => ({ "harnesshost.session": req.session, "harnesshost.operation": "exec" }),
      () => this.execOp(req),
    );
  }

  private async execOp(req: ExecRequest): Promise<TurnResult> {
    const batch = this.effectBatch(req.session);
    const release = await this.hold(req.session, "exec");
    const turn = this.running.start(req.session, req.signal);
    let mark: TurnMark | undefined;
    try {
      const info = await this.session(req.session);
      await this.chain.ensure(this.deps.journal, req.session);
      const window = await this.records.window(this.deps.journal, req.session);
      const { log } = window;
      refuseInputWhileGated(log, req.session);
      const entry = await this.resolveHarness(req.harness || info.harness, log, info);
      const admission = await admit(entry, turn.signal);
      refuseOffPin(entry.name, admission.descriptor.version, log, req.session);
      mark = startTurn(this.deps.metrics, entry.name, admission.memory);
      annotateSpan(() => ({
        "harnesshost.harness": entry.name,
        "harnesshost.tier": admission.memory ? "memory" : "stateless",
        "harnesshost.seq.from": info.lastSeq + 1,
      }));
      const inc = await this.incarnate(entry, admission, info, window);
      const fence = await this.turnFence(info);
      if (admission.memory) this.actorFence.set(req.session, fence);
      const head = await this.deps.journal.head(req.session);
      // A stateless harness's history begins after the last compaction's through_seq (§16).
      const historyBase = admission.memory ? 0 : log.historyBase(head.seq + 1);
      const full = admission.memory ? [] : await this.history.get(this.deps.journal, req.session, head);
      const history = historyBase === 0 ? full : full.slice(historyBase);
      const start = new LazyTurnStart(async (id) =>
        admission.memory ? memoryTurnStart(this.deps.journal, entry, req.session, log, id) : { kind: "stateless" },
      );
      const deadline = turnDeadline(turn.signal, this.turnMs);
      const result = await execTurn(
        this.controller(req.observer, { parking: start.parking, ...(batch ? { effects: batch } : {}) }),
        {
          session: req.session,
          binding: { harness: inc.harness, name: entry.name, descriptor: admission.descriptor },
          fence,
          inputs: req.inputs,
          ...(req.expectedLastSeq !== undefined ? { expectedLastSeq: req.expectedLastSeq } : {}),
          ...(req.config ? { config: req.config } : {}),
          ...(req.resumeFromSeq ? { resumeFromSeq: req.resumeFromSeq } : {}),
          history,
          historyBase,
          ...(info.identity ? { identity: info.identity } : {}),
          ...(req.ctx?.requestId !== undefined ? { requestId: req.ctx.requestId } : {}),
          signal: deadline.signal,
        },
      ).finally(deadline.done);
      annotateSpan(() => ({
        "harnesshost.execution_id": result.executionId,
        "harnesshost.seq.to": result.lastSeq,
        "harnesshost.parked": result.parked !== undefined,
      }));
      countTools(this.deps.metrics, result.records);
      if (result.parked) {
        const parked = await this.park(
          entry,
          req.session,
          fence,
          { ...result, parked: result.parked },
          start,
          req.observer,
          batch,
        );
        endTurn(this.deps.metrics, mark, "parked");
        return parked;
      }
      if (!admission.memory) this.history.extend(req.session, result.records);
      this.chain.noteAppended(req.session, result.records);
      this.records.noteAppended(req.session, result.records);
      await this.checkpointAfterTurn(entry, admission, req.session, result, req.signal, req.ctx);
      if (this.log.isLevelEnabled("debug"))
        this.opLog(req.ctx, req.session, entry.name).debug(
          { turn: result.executionId, seq: result.lastSeq, records: result.records.length },
          "turn completed",
        );
      this.audit(batch, result.records.at(-1), "turn.completed", {
        execution_id: result.executionId,
        harness: entry.name,
        records: result.records.length,
      });
      endTurn(this.deps.metrics, mark, "completed");
      return result;
    } catch (err) {
      endTurn(this.deps.metrics, mark, failedOutcome(err));
      throw err;
    } finally {
      await release();
      turn.done();
      this.dispatchEffects(batch);
    }
  }

  /** Re-drives an interrupted turn (if any) and records RESUME. */
  async resume(session: string, outer: AbortSignal, observer?: TurnObserver, ctx?: OpContext): Promise<ResumeResult> {
    return measured(this.deps.metrics, "resume", () =>
      traced(
        "harnesshost.turn",
        () => ({ "harnesshost.session": session, "harnesshost.operation": "resume" }),
        () => this.resumeOp(session, outer, observer, ctx),
      ),
    );
  }

  private async resumeOp(
    session: string,
    outer: AbortSignal,
    observer: TurnObserver | undefined,
    ctx: OpContext | undefined,
  ): Promise<ResumeResult> {
    const batch = this.effectBatch(session);
    const release = await this.hold(session, "resume");
    const running = this.running.start(session, outer);
    const signal = running.signal;
    let mark: TurnMark | undefined;
    try {
      const info = await this.session(session);
      await this.chain.ensure(this.deps.journal, session);
      // Parked with no decision: zero steps — no admission, no harness, no model, no tool, no record.
      const window = await this.records.window(this.deps.journal, session);
      const { records, log } = window;
      const gate = log.pendingApproval();
      if (gate) return { turn: undefined, record: records.at(-1)!, parked: gate.ref };
      const pending = log.pending();
      // Refusals judged from the log come before any process, actor, fence or write.
      const refusal = pending && resumeRefusal(pending, info.harness);
      if (refusal) throw refusal;
      const pendingId = pending?.execution.executionId;
      const entry = await this.resolveHarness(info.harness, log, info);
      const admission = await admit(entry, signal);
      if (pending)
        checkRecordedVersion(pending.execution, admission.descriptor.version, log.certifiedVersion(pending.execution));
      // A memory turn is re-driven from its start state (never on a live actor it already ran on).
      const restart: TurnStart | undefined =
        admission.memory && pendingId !== undefined
          ? await memoryTurnStart(this.deps.journal, entry, session, log, pendingId)
          : undefined;
      if (restart?.kind === "none") throw new HostError(ErrorCode.FailedPrecondition, restart.why);
      const inc =
        restart?.kind === "fresh"
          ? await this.freshActor(entry, session)
          : restart?.kind === "checkpoint"
            ? await this.restoredActor(entry, session, restart.ref)
            : await this.incarnate(entry, admission, info, window);
      if (pendingId === undefined) {
        // Nothing to re-drive (resumeTurn would write nothing): the new fence and RESUME are one commit.
        const { fence, record } = await this.commitLifecycle(
          session,
          records.at(-1)?.seq ?? 0,
          ev.lifecycle(Lifecycle_Kind.LIFECYCLE_RESUME),
        );
        if (admission.memory) this.actorFence.set(session, fence);
        observer?.onRecord?.(record);
        return { turn: undefined, record };
      }
      const fence = await this.mint(session);
      if (admission.memory) this.actorFence.set(session, fence);
      mark = startTurn(this.deps.metrics, entry.name, admission.memory);
      const start = new LazyTurnStart(async () => restart ?? { kind: "stateless" });
      const deadline = turnDeadline(signal, this.turnMs);
      const turn = await resumeTurn(
        this.controller(observer, { parking: start.parking, ...(batch ? { effects: batch } : {}) }),
        {
          session,
          binding: { harness: inc.harness, name: entry.name, descriptor: admission.descriptor },
          fence,
          ...(admission.memory ? { history: [] } : {}),
          records,
          log,
          ...(info.identity ? { identity: info.identity } : {}),
          ...(ctx?.requestId !== undefined ? { requestId: ctx.requestId } : {}),
          signal: deadline.signal,
        },
      ).finally(deadline.done);
      if (turn) countTools(this.deps.metrics, turn.records, records);
      if (turn?.parked) {
        const parkedTurn = await this.park(
          entry,
          session,
          fence,
          { ...turn, parked: turn.parked },
          start,
          observer,
          batch,
        );
        endTurn(this.deps.metrics, mark, "parked");
        return { turn: parkedTurn, record: parkedTurn.records.at(-1)!, parked: turn.parked };
      }
      if (turn) await this.checkpointAfterTurn(entry, admission, session, turn, signal, ctx);
      if (turn)
        this.audit(batch, turn.records.at(-1), "turn.completed", {
          execution_id: turn.executionId,
          harness: entry.name,
          records: turn.records.length,
        });
      const head = await this.deps.journal.head(session);
      const record = await this.deps.journal.append(
        session,
        head.seq,
        fence,
        ev.lifecycle(Lifecycle_Kind.LIFECYCLE_RESUME),
      );
      observer?.onRecord?.(record);
      endTurn(this.deps.metrics, mark, "completed");
      return { turn, record };
    } catch (err) {
      endTurn(this.deps.metrics, mark, failedOutcome(err));
      throw err;
    } finally {
      await release();
      running.done();
      this.dispatchEffects(batch);
    }
  }

  /**
   * Cancels the session's turn (docs/protocol.md §17): a turn running on this host has its signal
   * aborted, and one running on another host sharing the journal is asked to (repeatedly, until the
   * session is free); either way Cancel returns once the turn has released the session, its ERROR
   * {CANCELLED} recorded. A parked turn's own open wait is withdrawn (withdraw.ts). Anything else —
   * no turn, a completed, interrupted or superseded one, an inherited wait — is a no-op.
   */
  async cancel(req: CancelRequest): Promise<CancelOutcome> {
    await this.session(req.session);
    if (req.executionId) {
      const named = (await this.records.window(this.deps.journal, req.session)).log.execution(req.executionId);
      if (!named) throw new HostError(ErrorCode.NotFound, `session ${req.session} has no execution ${req.executionId}`);
      if (named.execution.completed || !named.current) return "idle";
    }
    const local = this.running.cancel(req.session, req.reason);
    if (local) {
      await this.settledWithin(local, req.session);
      return "cancelled";
    }
    const holder = this.guard.holder(req.session);
    if (holder)
      throw new HostError(
        ErrorCode.SessionBusy,
        `session ${req.session} is busy (${holder} in progress, not a turn); retry`,
      );
    let release: () => Promise<void>;
    let batch: EffectBatch | undefined;
    try {
      release = await this.hold(req.session, "cancel");
    } catch (err) {
      if (!isHostError(err, ErrorCode.SessionBusy) || !this.deps.journal.requestCancel) throw err;
      await this.cancelElsewhere(req);
      return "requested";
    }
    try {
      await this.chain.ensure(this.deps.journal, req.session);
      const { log } = await this.records.window(this.deps.journal, req.session);
      const plan = planWithdrawal(log, req.reason, req.identity);
      if (!plan) {
        const gate = log.ownUnreceiptedGate();
        if (gate)
          throw new HostError(
            ErrorCode.FailedPrecondition,
            `session ${req.session}'s wait (request seq ${gate.ref.requestSeq}) is already decided; resume continues the turn — a decided wait cannot be withdrawn`,
          );
        return "idle";
      }
      const fence = await this.mint(req.session);
      const records = await this.deps.journal.appendBatch(req.session, plan.head, fence, plan.events);
      this.chain.noteAppended(req.session, records);
      this.records.noteAppended(req.session, records);
      this.history.forget(req.session);
      batch = this.effectBatch(req.session);
      this.audit(batch, records.at(-1), "wait.withdrawn", {
        execution_id: plan.ref.executionId,
        tool_call_id: plan.ref.toolCallId,
        request_seq: plan.ref.requestSeq,
      });
      return "withdrawn";
    } finally {
      await release();
      this.dispatchEffects(batch);
    }
  }

  /** Waits (bounded) for a cancelled turn here to release the session. */
  private async settledWithin(settled: Promise<void>, session: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), this.cancelWaitMs);
    });
    const late = await Promise.race([settled.then(() => false), expired]).finally(() => clearTimeout(timer));
    if (late)
      throw new HostError(
        ErrorCode.SessionBusy,
        `session ${session}'s turn was cancelled but has not released the session within ${this.cancelWaitMs} ms; retry Cancel`,
      );
  }

  /**
   * Another host holds the session: send the cancel request, repeating it every CANCEL_REPEAT_MS (a
   * request only reaches hosts listening when it is sent) until the session's lock is free, for at most
   * cancelWaitMs.
   */
  private async cancelElsewhere(req: CancelRequest): Promise<void> {
    const journal = this.deps.journal;
    const deadline = Date.now() + this.cancelWaitMs;
    for (;;) {
      await journal.requestCancel?.(req.session, req.reason);
      await new Promise((resolve) => setTimeout(resolve, CANCEL_REPEAT_MS));
      const unlock = await journal.tryLockSession?.(req.session);
      if (unlock) {
        await unlock();
        return;
      }
      if (Date.now() >= deadline)
        throw new HostError(
          ErrorCode.SessionBusy,
          `the host running session ${req.session} did not release it within ${this.cancelWaitMs} ms of the cancel request; retry Cancel`,
        );
    }
  }

  /**
   * Deletes the session for good (docs/protocol.md §18): refused (ABORTED) while any operation holds it
   * here or on another host — cancel a running turn first; then its records, checkpoint rows and this
   * host's caches and live actor are dropped. Resolves to the session as it was.
   */
  async delete(session: string): Promise<SessionInfo> {
    const holder = this.guard.holder(session);
    if (holder)
      throw new HostError(
        ErrorCode.SessionBusy,
        `session ${session} is busy (${holder} in progress); cancel its turn first (harnesshost cancel --session ${session})`,
      );
    let release: () => Promise<void>;
    try {
      release = await this.hold(session, "delete");
    } catch (err) {
      if (!isHostError(err, ErrorCode.SessionBusy)) throw err;
      throw new HostError(
        ErrorCode.SessionBusy,
        `session ${session} is busy on another host; cancel its turn first (harnesshost cancel --session ${session})`,
        { cause: err },
      );
    }
    try {
      const info = await this.session(session);
      await this.deps.journal.deleteSession(session);
      this.forget(session);
      // A live actor of the session (memory tier) is released; a harness no longer served has none here.
      let entry: HarnessEntry | undefined;
      try {
        entry = this.deps.harnesses.resolve(info.harness);
      } catch {
        entry = undefined;
      }
      await entry?.runtime.stop(session).catch(() => undefined);
      return info;
    } finally {
      await release();
    }
  }

  /** Drops everything this host remembers of a session. */
  private forget(session: string): void {
    this.minted.delete(session);
    this.actorFence.delete(session);
    this.history.forget(session);
    this.records.forget(session);
    this.chain.forget(session);
  }

  /** Snapshots the session's compute and records SUSPEND carrying the ref; frees the actor. */
  async suspend(session: string, signal: AbortSignal, ctx?: OpContext): Promise<SuspendResult> {
    return measured(this.deps.metrics, "suspend", () =>
      traced(
        "harnesshost.suspend",
        () => ({ "harnesshost.session": session }),
        () => this.suspendOp(session, signal, ctx),
      ),
    );
  }

  private async suspendOp(session: string, signal: AbortSignal, ctx: OpContext | undefined): Promise<SuspendResult> {
    const release = await this.hold(session, "suspend");
    try {
      const info = await this.session(session);
      await this.chain.ensure(this.deps.journal, session);
      const window = await this.records.window(this.deps.journal, session);
      const { records, log } = window;
      const entry = await this.resolveHarness(info.harness, log, info);
      const existing = log.lastOwnSuspend;
      if (info.computeState === "COLD" && existing && existing.seq === info.lastSeq) {
        return { record: records.at(-1)!, ref: existing.ref };
      }
      const admission = await admit(entry, signal);
      // A stateless harness's state is its journal, and a memory actor that never ran a turn has no
      // state yet: either way the ref names the session and nothing is captured. A memory session with
      // an interrupted turn is captured at that turn's start (docs/protocol.md §5.8 rule 7), never from
      // a live actor that may have run part of it.
      const captures = admission.memory && log.hasTurns;
      const pendingStart = captures ? await this.pendingTurnStart(entry, session, log) : undefined;
      if (captures && !pendingStart) await this.requireLiveActor(entry, admission, info, window);
      const ref: SnapshotRef = !captures
        ? { local: session, externalUri: "", memory: false, sealed: false }
        : (pendingStart ??
          (await this.headCheckpoint(session, records)) ??
          (await entry.runtime.snapshot(session, "EXTERNAL", signal)));
      // The blob is stored (durably) by now: the fence, SUSPEND naming it and its checkpoint commit together.
      const { record } = await this.commitLifecycle(
        session,
        records.at(-1)?.seq ?? 0,
        ev.lifecycle(Lifecycle_Kind.LIFECYCLE_SUSPEND, {
          snapshotLocal: ref.local,
          snapshotExternalUri: ref.externalUri,
          snapshotMemory: ref.memory,
        }),
        ref.memory ? ref.externalUri : undefined,
      );
      await entry.runtime.stop(session);
      this.actorFence.delete(session);
      this.history.forget(session);
      if (this.log.isLevelEnabled("debug"))
        this.opLog(ctx, session, entry.name).debug({ seq: record.seq, memory: ref.memory }, "session suspended");
      return { record, ref };
    } finally {
      await release();
    }
  }

  /** Branches the session at a seq into children (docs/protocol.md §7.3). */
  async fork(req: ForkRequest): Promise<{ children: SessionInfo[]; atSeq: number }> {
    return measured(this.deps.metrics, "fork", () =>
      traced(
        "harnesshost.fork",
        () => ({
          "harnesshost.session": req.parent,
          "harnesshost.fork.at_seq": req.atSeq,
          "harnesshost.fork.children": req.children.length,
        }),
        () => this.forkOp(req),
      ),
    );
  }

  private async forkOp(req: ForkRequest): Promise<{ children: SessionInfo[]; atSeq: number }> {
    const release = await this.hold(req.parent, "fork");
    try {
      const info = await this.session(req.parent);
      await this.chain.ensure(this.deps.journal, req.parent);
      const entry = await this.resolveHarness(info.harness, await this.sessionLog(req.parent), info);
      const admission = await admit(entry, req.signal);
      const head = await this.deps.journal.head(req.parent);
      const atSeq = req.atSeq === 0 ? head.seq : req.atSeq;
      if (atSeq < 1 || atSeq > head.seq) {
        throw new HostError(
          ErrorCode.InvalidArgument,
          `fork at seq ${atSeq} is outside the session's records 1..${head.seq}`,
        );
      }
      let ref: SnapshotRef = { local: req.parent, externalUri: "", memory: false, sealed: false };
      if (admission.memory) {
        if (atSeq !== head.seq) {
          // RAM state exists only at the head — or at the newest checkpoint, whose blob captured it
          // (how a lost on-suspend actor is recovered).
          const checkpoint = await this.deps.journal.latestCheckpoint(req.parent);
          const bound =
            checkpoint?.seq === atSeq ? (await this.deps.journal.readRange(req.parent, atSeq, atSeq))[0] : undefined;
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
      // Every child and its checkpoint row in one transaction: all children exist, or none does.
      let markers: JournalRecord[];
      try {
        markers = await this.deps.journal.forkAll(
          req.parent,
          atSeq,
          req.children.map((meta) => ({
            meta: { ...meta, parentUid: req.parent, forkSeq: atSeq },
            ...(ref.memory ? { checkpointDigest: ref.externalUri } : {}),
          })),
        );
      } catch (err) {
        await Promise.allSettled(provisioned.map((uid) => entry.runtime.stop(uid)));
        throw err;
      }
      for (const [i, meta] of req.children.entries()) {
        const marker = markers[i];
        if (ref.memory && marker) this.actorFence.set(meta.uid, marker.fence);
        children.push(await this.session(meta.uid));
      }
      return { children, atSeq };
    } finally {
      await release();
    }
  }

  /**
   * Moves a session to another version of its harness (docs/versioning.md). Refused before anything
   * is written when a turn is pending or parked, when the version is not served, or (stateless) when a
   * replay of the session's completed turns under the new version diverges — the DivergedError names
   * the first divergent seq. Memory tier: the newest state is restored into the new version (the
   * node runs the harness's `migrate` once), snapshotted, and the session is left cold at a SUSPEND
   * naming that migrated snapshot. Either way one upgrade record (and, memory, that SUSPEND plus its
   * checkpoint) is committed under a new fence; the next turn runs on the new version.
   */
  async upgrade(session: string, toVersion: string, signal: AbortSignal): Promise<UpgradeResult> {
    if (toVersion === "") throw new HostError(ErrorCode.InvalidArgument, "to_version is required");
    const release = await this.hold(session, "upgrade");
    try {
      const info = await this.session(session);
      await this.chain.ensure(this.deps.journal, session);
      const { records, log } = await this.records.window(this.deps.journal, session);
      if (log.pending()) {
        throw new HostError(
          ErrorCode.FailedPrecondition,
          `session ${session} has an interrupted or parked turn; finish it on its version first (harnesshost resume), then upgrade`,
        );
      }
      const from = log.pinnedVersion?.harness === info.harness ? log.pinnedVersion.version : "";
      if (from === toVersion) return { from, to: toVersion, upgradeSeq: 0, replayedTurns: 0, snapshot: "" };
      await this.deps.harnesses.refresh?.(info.harness);
      const entry = this.deps.harnesses.resolveVersion?.(info.harness, toVersion);
      if (!entry)
        throw new HostError(
          ErrorCode.FailedPrecondition,
          `harness "${info.harness}" version "${toVersion}" is not served on this host; register it first (harness register --name ${info.harness} --version ${toVersion} …)`,
        );
      const admission = await admit(entry, signal);
      if (admission.descriptor.version !== toVersion)
        throw new HostError(
          ErrorCode.FailedPrecondition,
          `harness "${info.harness}" reports version "${admission.descriptor.version}", not "${toVersion}"`,
        );
      const head = records.at(-1)?.seq ?? 0;
      const record = upgradeEvent({ harness: entry.name, from, to: toVersion });
      if (!admission.memory) {
        const eph = await entry.runtime.ephemeral();
        let replayed: ReplayResult;
        try {
          replayed = await replaySession(
            { journal: this.deps.journal },
            {
              session,
              binding: { harness: eph.harness, name: entry.name, descriptor: admission.descriptor },
              signal,
              upgradeFrom: from,
            },
          );
        } finally {
          await eph.release();
        }
        const { record: committed } = await this.commitLifecycle(session, head, record);
        return {
          from,
          to: toVersion,
          upgradeSeq: committed.seq,
          replayedTurns: replayed.executions.length,
          snapshot: "",
        };
      }
      // Memory tier: the state between turns, restored into the new version (which migrates it once).
      const source = await this.upgradeSource(info, log, records, from, signal);
      if (!source) {
        // No turn completed yet: no state to migrate; the first turn starts a fresh actor of the version.
        const { record: committed } = await this.commitLifecycle(session, head, record);
        return { from, to: toVersion, upgradeSeq: committed.seq, replayedTurns: 0, snapshot: "" };
      }
      const spec = { sessionUid: session, harnessName: entry.name };
      await entry.runtime.stop(session);
      let migrated: SnapshotRef;
      try {
        await entry.runtime.restore(source, spec);
        migrated = await entry.runtime.snapshot(session, "EXTERNAL", signal);
      } finally {
        await entry.runtime.stop(session);
      }
      const suspend = ev.lifecycle(Lifecycle_Kind.LIFECYCLE_SUSPEND, {
        snapshotLocal: migrated.local,
        snapshotExternalUri: migrated.externalUri,
        snapshotMemory: migrated.memory,
      });
      const { fence, records: committed } = await appendUnderNewFence(
        this.deps.journal,
        session,
        head,
        [record, suspend],
        migrated.memory ? { checkpointDigest: migrated.externalUri } : {},
      );
      this.rememberMinted(session, fence);
      this.chain.noteAppended(session, committed);
      this.records.noteAppended(session, committed);
      // The old version's live actor (if any) holds pre-upgrade RAM: it must never run a turn again.
      const old = from === toVersion ? undefined : this.deps.harnesses.resolveVersion?.(info.harness, from);
      if (old && old !== entry) await old.runtime.stop(session).catch(() => undefined);
      this.actorFence.delete(session);
      this.history.forget(session);
      return {
        from,
        to: toVersion,
        upgradeSeq: committed[0]?.seq ?? 0,
        replayedTurns: 0,
        snapshot: migrated.memory ? migrated.externalUri : "",
      };
    } finally {
      await release();
    }
  }

  /**
   * The memory state an upgrade migrates: the session's own SUSPEND when it is cold there, else its
   * newest checkpoint when no turn completed after it, else a snapshot of the live actor on its pinned
   * version; undefined when no turn ever completed (a fresh actor). FAILED_PRECONDITION otherwise.
   */
  private async upgradeSource(
    info: SessionInfo,
    log: SessionLog,
    records: readonly JournalRecord[],
    from: string,
    signal: AbortSignal,
  ): Promise<SnapshotRef | undefined> {
    if (log.lastEndSeq === 0) return undefined;
    const own = log.lastOwnSuspend;
    if (info.computeState === "COLD" && own?.ref.memory && own.seq > log.lastEndSeq) return own.ref;
    const checkpoint = await this.deps.journal.latestCheckpoint(info.uid);
    const bound = checkpoint ? records[checkpoint.seq - 1] : undefined;
    if (checkpoint && bound?.contentHash === checkpoint.contentHash && checkpoint.seq >= log.lastEndSeq)
      return { local: info.uid, externalUri: checkpoint.digest, memory: true, sealed: false };
    const old = this.deps.harnesses.resolveVersion?.(info.harness, from);
    if (old && (await old.runtime.status(info.uid)) === "LIVE" && !this.movedOn(info)) {
      const ref = await old.runtime.snapshot(info.uid, "EXTERNAL", signal);
      await old.runtime.stop(info.uid);
      return ref;
    }
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `session ${info.uid}: no checkpoint or live actor holds its state after its last turn (seq ${log.lastEndSeq}); nothing to migrate`,
    );
  }

  /** Re-executes the session's completed turns on a fresh, session-less harness instance. */
  async replay(session: string, signal: AbortSignal): Promise<ReplayResult> {
    const info = await this.session(session);
    const entry = await this.resolveHarness(info.harness, await this.sessionLog(session), info);
    const descriptor = await entry.runtime.describe(signal);
    const eph = await entry.runtime.ephemeral();
    try {
      return await replaySession(
        { journal: this.deps.journal },
        { session, binding: { harness: eph.harness, name: entry.name, descriptor }, signal, turnMs: this.turnMs },
      );
    } finally {
      await eph.release();
    }
  }

  /** The parent's checkpoint for a memory fork: its SUSPEND ref if cold, else a new SUSPEND. */
  private async memoryForkSource(
    entry: HarnessEntry,
    admission: Admission,
    info: SessionInfo,
    atSeq: number,
  ): Promise<SnapshotRef> {
    const window = await this.records.window(this.deps.journal, info.uid);
    const own = window.log.lastOwnSuspend;
    if (info.computeState === "COLD" && own && own.seq === atSeq && own.ref.memory) return own.ref;
    // No turn yet: no RAM state to clone; each child starts from a fresh actor like the parent would.
    if (!window.log.hasTurns) return { local: info.uid, externalUri: "", memory: false, sealed: false };
    // An interrupted turn: the children inherit it at its start (§5.8 rule 7), never a partial run.
    const pendingStart = await this.pendingTurnStart(entry, info.uid, window.log);
    if (pendingStart) return pendingStart;
    await this.requireLiveActor(entry, admission, info, window);
    const ref = await entry.runtime.snapshot(info.uid, "EXTERNAL");
    if (!ref.memory || ref.externalUri === "") {
      throw new HostError(
        ErrorCode.Unplaceable,
        `runtime ${entry.runtime.name} produced no external snapshot handle to clone from`,
      );
    }
    await this.commitLifecycle(
      info.uid,
      atSeq,
      ev.lifecycle(Lifecycle_Kind.LIFECYCLE_SUSPEND, {
        snapshotLocal: ref.local,
        snapshotExternalUri: ref.externalUri,
        snapshotMemory: true,
      }),
      ref.externalUri,
    );
    await entry.runtime.stop(info.uid);
    this.actorFence.delete(info.uid);
    return ref;
  }

  /**
   * The ref of the pending memory turn's restart point (a checkpoint, or a non-memory ref for a fresh
   * actor); undefined when no turn is pending; FAILED_PRECONDITION when the turn's start state is gone.
   */
  private async pendingTurnStart(
    entry: HarnessEntry,
    session: string,
    log: SessionLog,
  ): Promise<SnapshotRef | undefined> {
    const pending = log.pending();
    if (!pending) return undefined;
    const start = await memoryTurnStart(this.deps.journal, entry, session, log, pending.execution.executionId);
    switch (start.kind) {
      case "checkpoint":
        return start.ref;
      case "fresh":
      case "stateless":
        return { local: session, externalUri: "", memory: false, sealed: false };
      case "none":
        throw new HostError(ErrorCode.FailedPrecondition, start.why);
      default: {
        const exhaustive: never = start;
        throw new Error(`unknown turn start ${String(exhaustive)}`);
      }
    }
  }

  /**
   * The incarnation a turn runs on. Stateless: whatever the runtime gives. Memory: the live actor;
   * or a restore from the session's own SUSPEND when cold; or, when a live actor was lost, a restore
   * from the newest checkpoint if it still covers every completed turn — otherwise a loud refusal.
   */
  private async incarnate(
    entry: HarnessEntry,
    admission: Admission,
    info: SessionInfo,
    window: RecordWindow,
  ): Promise<Incarnation> {
    const { log } = window;
    const spec = { sessionUid: info.uid, harnessName: entry.name };
    if (!admission.memory) return entry.runtime.create(spec);
    if (info.computeState === "COLD") {
      const own = log.lastOwnSuspend;
      if (own?.ref.memory) return this.restoreFrom(entry, own.ref, spec);
    }
    const inc = await entry.runtime.create(spec);
    if (inc.origin === "restored" || (inc.origin === "attached" && !this.movedOn(info))) return inc;
    if (!log.hasTurns) return inc;
    return this.recoverLostActor(entry, admission, info, window);
  }

  /**
   * The live actor's state as a ref when the newest checkpoint is bound to the head record itself:
   * only a turn changes an actor's RAM, and every checkpoint is taken of (or restored into) the live
   * actor at the record it binds (a turn's END, a fork child's marker, a rebuild's END), so nothing
   * has run since and that stored blob already is the state a new snapshot would capture. Call only
   * after requireLiveActor. Undefined when anything was appended after the checkpoint.
   */
  private async headCheckpoint(session: string, records: readonly JournalRecord[]): Promise<SnapshotRef | undefined> {
    const head = records.at(-1);
    if (!head) return undefined;
    const checkpoint = await this.deps.journal.latestCheckpoint(session);
    if (!checkpoint || checkpoint.seq !== head.seq || checkpoint.contentHash !== head.contentHash) return undefined;
    return { local: session, externalUri: checkpoint.digest, memory: true, sealed: false };
  }

  private async requireLiveActor(
    entry: HarnessEntry,
    admission: Admission,
    info: SessionInfo,
    window: RecordWindow,
  ): Promise<void> {
    void admission;
    const status = await entry.runtime.status(info.uid);
    if (status === "LIVE" && !this.movedOn(info)) return;
    if (!window.log.hasTurns) {
      await entry.runtime.create({ sessionUid: info.uid, harnessName: entry.name });
      return;
    }
    await this.recoverLostActor(entry, admission, info, window);
  }

  private async recoverLostActor(
    entry: HarnessEntry,
    admission: Admission,
    info: SessionInfo,
    { records, log }: RecordWindow,
  ): Promise<Incarnation> {
    const checkpoint = await this.deps.journal.latestCheckpoint(info.uid);
    const spec = { sessionUid: info.uid, harnessName: entry.name };
    // No turn ever completed in the lineage: the state between turns is a fresh actor's.
    if (log.lastEndSeq === 0) return entry.runtime.create(spec);
    if (checkpoint) {
      const bound = records[checkpoint.seq - 1];
      if (bound && bound.contentHash === checkpoint.contentHash) {
        const ref = { local: info.uid, externalUri: checkpoint.digest, memory: true, sealed: false };
        if (log.lastEndSeq <= checkpoint.seq) return this.restoreFrom(entry, ref, spec);
        if (this.inCheckpointWindow(entry, log, checkpoint.seq))
          return this.rebuildAfterCheckpoint(entry, admission, info, { records, log }, checkpoint.seq, ref);
      }
    } else if (info.parentUid === "" && this.inCheckpointWindow(entry, log, 0)) {
      // The crash fell in the first turn's checkpoint window: the state before it is a fresh actor.
      return this.rebuildAfterCheckpoint(entry, admission, info, { records, log }, 0, undefined);
    }
    await entry.runtime.stop(info.uid);
    const at = checkpoint
      ? `the last good snapshot is at seq ${checkpoint.seq}; \`harnesshost fork --session ${info.uid} --at ${checkpoint.seq}\` recovers a consistent child from it`
      : "no snapshot of it exists";
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `the live RAM state of memory actor ${info.uid} (harness "${entry.name}", checkpoint policy ${entry.checkpointPolicy}) was lost with its node or host; ${at}`,
    );
  }

  /**
   * every-turn policy: exactly one completed turn lies after the newest checkpoint — the last one, whose
   * checkpoint a crash cut off. More (e.g. checkpoints failing on unsnapshottable state) stays loud.
   */
  private inCheckpointWindow(entry: HarnessEntry, log: SessionLog, checkpointSeq: number): boolean {
    if (entry.checkpointPolicy !== "every-turn") return false;
    return log.completedAfter(checkpointSeq) === 1;
  }

  /**
   * every-turn policy, crash between a turn's END and its checkpoint: restore the newest checkpoint (a
   * fresh actor when the first turn's checkpoint was the one lost) and
   * replay the completed turn after it against their recorded effects (no model call, no append, no
   * history the snapshot holds — I1, I5, I4), then checkpoint the rebuilt actor at the last END. A
   * harness that does not reproduce its recorded effects fails loudly (Diverged), never silently.
   */
  private async rebuildAfterCheckpoint(
    entry: HarnessEntry,
    admission: Admission,
    info: SessionInfo,
    { records, log }: RecordWindow,
    checkpointSeq: number,
    ref: SnapshotRef | undefined,
  ): Promise<Incarnation> {
    const spec = { sessionUid: info.uid, harnessName: entry.name };
    const inc = ref ? await this.restoreFrom(entry, ref, spec) : await entry.runtime.create(spec);
    try {
      await replaySession(
        { journal: this.deps.journal },
        {
          session: info.uid,
          binding: { harness: inc.harness, name: entry.name, descriptor: admission.descriptor },
          signal: AbortSignal.timeout(REBUILD_TIMEOUT_MS),
          afterSeq: checkpointSeq,
          noHistory: true,
        },
      );
    } catch (err) {
      await entry.runtime.stop(info.uid);
      throw err;
    }
    const end = records[log.lastEndSeq - 1];
    try {
      const snap = await entry.runtime.snapshot(info.uid, "EXTERNAL");
      if (end && snap.memory)
        await this.deps.journal.putCheckpoint({
          session: info.uid,
          seq: end.seq,
          contentHash: end.contentHash,
          digest: snap.externalUri,
          createdAtMs: Date.now(),
        });
    } catch (err) {
      // The rebuilt actor is live; the next completed turn checkpoints it again — but say so.
      if (end) await this.checkpointFailed(this.opLog(undefined, info.uid, entry.name), entry, info.uid, end.seq, err);
    }
    return inc;
  }

  /**
   * every-turn policy: checkpoint the actor bound to the END record of the turn just completed. The
   * turn is already committed, so a failed checkpoint (e.g. unsnapshottable state) must not fail it
   * (a caller would retry a turn that happened); it only leaves the newest checkpoint behind the last
   * END, which recoverLostActor reports loudly if the RAM is lost, and Suspend re-raises the cause.
   */
  private async checkpointAfterTurn(
    entry: HarnessEntry,
    admission: Admission,
    session: string,
    turn: TurnResult,
    signal: AbortSignal,
    ctx: OpContext | undefined,
  ): Promise<void> {
    if (!admission.memory || entry.checkpointPolicy !== "every-turn") return;
    const end = turn.records.at(-1);
    if (!end) return;
    await traced(
      "harnesshost.checkpoint",
      () => ({ "harnesshost.session": session, "harnesshost.harness": entry.name, "harnesshost.seq": end.seq }),
      () => this.checkpointAt(entry, session, turn, end, signal, ctx),
    );
  }

  private async checkpointAt(
    entry: HarnessEntry,
    session: string,
    turn: TurnResult,
    end: JournalRecord,
    signal: AbortSignal,
    ctx: OpContext | undefined,
  ): Promise<void> {
    try {
      // Bounded by the runtime's snapshot deadline (snapshotMs) and cancelled with the caller: a node
      // that never answers costs the committed turn a missing checkpoint, never a wedged session.
      const ref = await entry.runtime.snapshot(session, "EXTERNAL", signal);
      if (!ref.memory) return;
      await this.deps.journal.putCheckpoint({
        session,
        seq: end.seq,
        contentHash: end.contentHash,
        digest: ref.externalUri,
        createdAtMs: Date.now(),
      });
      this.deps.metrics?.checkpoint(entry.name, true);
    } catch (err) {
      // See above: the committed turn stands; the missing checkpoint is counted, logged and shown.
      annotateSpan(() => ({ "harnesshost.checkpoint.failed": true }));
      const log = this.opLog(ctx, session, entry.name).child({ turn: turn.executionId });
      await this.checkpointFailed(log, entry, session, end.seq, err);
    }
  }

  /** Restores a session's actor from a snapshot ref (a `harnesshost.restore` span while tracing). */
  private restoreFrom(entry: HarnessEntry, ref: SnapshotRef, spec: { sessionUid: string; harnessName: string }) {
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

  /** The logger of one operation: its request id, session and harness on every line. */
  private opLog(ctx: OpContext | undefined, session: string, harness: string): Log {
    return this.log.child({
      ...(ctx?.requestId !== undefined ? { request_id: ctx.requestId } : {}),
      session,
      harness,
    });
  }

  /** A per-turn checkpoint failed: count it, remember it for GetSession, and warn with what it risks. */
  private async checkpointFailed(
    log: Log,
    entry: HarnessEntry,
    session: string,
    seq: number,
    err: unknown,
  ): Promise<void> {
    const reason = redactSecrets(err instanceof Error ? err.message : String(err));
    const good = await this.deps.journal.latestCheckpoint(session).catch(() => undefined);
    const failure = this.checkpointHealth.note(session, { seq, harness: entry.name, reason, atMs: Date.now() });
    this.deps.metrics?.checkpoint(entry.name, false);
    log.warn(
      {
        seq,
        reason,
        risk: checkpointRisk(good?.seq),
        last_checkpoint_seq: good?.seq ?? 0,
        failures: failure.count,
        policy: entry.checkpointPolicy,
      },
      "checkpoint failed",
    );
  }
}
