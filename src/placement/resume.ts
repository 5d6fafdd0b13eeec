// Resume: re-drives an interrupted turn (if any) and records RESUME (docs/protocol.md §5.8, §7.3).
// Invariants: a session parked on an undecided gate takes zero steps (no admission, harness, model,
// tool or record); refusals judged from the log come before any process, actor, fence or write; a
// memory turn is re-driven from its start state, never on a live actor it already ran on.
import { byActor } from "./op-actor.js";
import { Lifecycle_Kind } from "../gen/agentsessions/v1/common_pb.js";
import { resumeTurn, type TurnObserver, type TurnResult } from "../controller/index.js";
import { ev } from "../controller/events.js";
import type { SessionLog } from "../projection/session-log.js";
import { checkRecordedVersion, refuseStaleHead, resumeRefusal } from "../controller/turn.js";
import { turnDeadline } from "../controller/turn-deadline.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { OpContext } from "../obs/context.js";
import type { Log } from "../obs/op-log.js";
import type { Incarnation } from "../runtime/types.js";
import { admit, warnBuildDrift, type Admission } from "./admission.js";
import type { HarnessEntry } from "./harness-entry.js";
import { type LockedSession, withLockedSession } from "./locked-session.js";
import { endTurn, failedOutcome, startTurn, type TurnMark } from "./op-metrics.js";
import type { OperationContext } from "./operation-context.js";
import type { ResumeResult } from "./operation-types.js";
import { completeTurn, parkIfGated, type PlacedTurn } from "./turn-outcome.js";
import { LazyTurnStart, memoryTurnStart, type TurnStart } from "./waits.js";

interface ResumeCall {
  readonly observer: TurnObserver | undefined;
  readonly ctx: OpContext | undefined;
  /** An Exec's expected_last_seq when Exec recovers a decided turn through Resume. */
  readonly expectedLastSeq?: number | undefined;
}

/** The resumed session's harness, admitted, and where its pending turn (if any) restarts. */
interface ResumePlan {
  readonly entry: HarnessEntry;
  readonly admission: Admission;
  readonly pendingId: string | undefined;
  readonly restart: TurnStart | undefined;
  /** The operation's logger (request_id, session, harness, and the pending turn's id as `turn`). */
  readonly log: Log;
}

export function resumeOp(op: OperationContext, session: string, outer: AbortSignal, call: ResumeCall) {
  return withLockedSession(op.state, session, "resume", { signal: outer, turn: true, ctx: call.ctx }, async (s) => {
    let mark: TurnMark | undefined;
    try {
      const { log } = s.window;
      refuseStaleHead(call.expectedLastSeq, log.head.seq);
      const gate = log.pendingApproval();
      if (gate) return { turn: undefined, record: s.window.last!, parked: gate.ref } satisfies ResumeResult;
      const plan = await planResume(op, s, log, call.ctx);
      const inc = await resumeActor(op, s, plan);
      if (plan.pendingId === undefined) return await resumeIdle(op, s, plan, call);
      const fence = await op.state.mint(session);
      if (plan.admission.memory) op.state.actorFence.set(session, fence);
      mark = startTurn(op.state.deps.metrics, plan.entry.name, plan.admission.memory);
      const start = new LazyTurnStart(async () => plan.restart ?? { kind: "stateless" });
      const placed: PlacedTurn = {
        ...plan,
        executionId: plan.pendingId,
        start,
        mark,
        session,
        fence,
        observer: call.observer,
        batch: s.batch,
      };
      return await redrive(op, s, placed, inc, call);
    } catch (err) {
      endTurn(op.state.deps.metrics, mark, failedOutcome(err));
      throw err;
    }
  });
}

/** Refusals from the log, the harness, admission, the recorded version and the restart point. */
async function planResume(
  { state }: OperationContext,
  s: LockedSession,
  log: SessionLog,
  ctx: OpContext | undefined,
): Promise<ResumePlan> {
  const pending = log.pending();
  const pendingId = pending?.execution.executionId;
  // Refusals judged from the log come before any process, actor, fence or write.
  const refusal = pending && resumeRefusal(pending, s.info.harness);
  if (refusal) {
    state.opLog(ctx, s.uid, s.info.harness, pendingId).info({ code: refusal.code }, "re-drive refused");
    throw refusal;
  }
  const entry = await state.resolveHarness(s.info.harness, log, s.info);
  const opLog = state.opLog(ctx, s.uid, entry.name, pendingId);
  const admission = await admit(entry, s.signal);
  warnBuildDrift(state.opLog(undefined, s.uid, entry.name), entry.name, admission, log.pinnedVersion);
  if (pending)
    checkRecordedVersion(pending.execution, admission.descriptor.version, log.certifiedVersion(pending.execution));
  // A memory turn is re-driven from its start state (never on a live actor it already ran on).
  const restart: TurnStart | undefined =
    admission.memory && pendingId !== undefined
      ? await memoryTurnStart(state.deps.journal, entry, s.uid, log, pendingId)
      : undefined;
  if (restart?.kind === "none") {
    opLog.warn({ code: ErrorCode.FailedPrecondition }, "re-drive refused: the interrupted turn's start state is gone");
    throw new HostError(ErrorCode.FailedPrecondition, restart.why);
  }
  return { entry, admission, pendingId, restart, log: opLog };
}

function resumeActor({ actors }: OperationContext, s: LockedSession, plan: ResumePlan): Promise<Incarnation> {
  const { entry, admission, restart, log } = plan;
  if (restart?.kind === "fresh") return actors.freshActor(entry, s.uid, log);
  if (restart?.kind === "checkpoint") return actors.restoredActor(entry, s.uid, restart.ref, log);
  return actors.incarnate(entry, admission, s.info, s.window, log);
}

/** Nothing to re-drive (resumeTurn would write nothing): the new fence and RESUME are one commit. */
async function resumeIdle(
  { state }: OperationContext,
  s: LockedSession,
  plan: ResumePlan,
  call: ResumeCall,
): Promise<ResumeResult> {
  const { fence, record } = await state.commitLifecycle(
    s.uid,
    s.window.last?.seq ?? 0,
    byActor(ev.lifecycle(Lifecycle_Kind.LIFECYCLE_RESUME), call.ctx),
  );
  if (plan.admission.memory) state.actorFence.set(s.uid, fence);
  call.observer?.onRecord?.(record);
  plan.log.debug({ seq: record.seq, redriven: false }, "session resumed");
  return { turn: undefined, record };
}

/** Re-drives the interrupted turn through the serving sink, then parks it or records RESUME. */
async function redrive(
  op: OperationContext,
  s: LockedSession,
  placed: PlacedTurn,
  inc: Incarnation,
  call: ResumeCall,
): Promise<ResumeResult> {
  const { state } = op;
  const { entry, admission, session, fence } = placed;
  const { log } = s.window;
  // Read before the re-drive: the window's projection moves on as the turn's records are noted.
  const awaited = log.awaitedCall();
  const deadline = turnDeadline(s.signal, state.turnMs);
  const turn: TurnResult | undefined = await resumeTurn(
    state.controller(call.observer, { parking: placed.start.parking, ...(s.batch ? { effects: s.batch } : {}) }),
    {
      session,
      binding: { harness: inc.harness, name: entry.name, descriptor: admission.descriptor, digest: admission.digest },
      fence,
      ...(admission.memory ? { history: [] } : {}),
      records: { headSeq: log.head.seq, range: (from, to) => s.window.range(from, to) },
      log,
      ...(s.info.identity ? { identity: s.info.identity } : {}),
      ...(call.ctx?.requestId !== undefined ? { requestId: call.ctx.requestId } : {}),
      logger: placed.log,
      signal: deadline.signal,
    },
  ).finally(deadline.done);
  const parked = turn && (await parkIfGated(state, placed, turn, awaited));
  if (parked && turn?.parked) return { turn: parked, record: parked.records.at(-1)!, parked: turn.parked };
  if (turn) await completeTurn(op, placed, turn, s.signal);
  const head = await state.deps.journal.head(session);
  const record = await state.deps.journal.append(
    session,
    head.seq,
    fence,
    byActor(ev.lifecycle(Lifecycle_Kind.LIFECYCLE_RESUME), call.ctx),
  );
  call.observer?.onRecord?.(record);
  placed.log.debug({ seq: record.seq, redriven: turn !== undefined }, "session resumed");
  endTurn(state.deps.metrics, placed.mark, "completed");
  return { turn, record };
}
