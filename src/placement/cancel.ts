// Cancel (docs/protocol.md §17) and Delete (§18). Invariants: Cancel stops the session's turn — here
// by aborting its signal, on another host sharing the journal by asking it (repeatedly) — and returns
// once the turn released the session, its ERROR {CANCELLED} recorded; a parked turn's own open wait is
// withdrawn; anything else (no turn, a completed, interrupted or superseded one, an inherited wait) is
// a no-op. Delete is refused (ABORTED) while any operation holds the session here or elsewhere, and
// then drops its records, checkpoint rows, this host's caches and live actor.
import { planWithdrawal } from "../controller/withdraw.js";
import type { EffectBatch } from "../effects/batch.js";
import { ErrorCode, HostError, isHostError } from "../errors/index.js";
import type { SessionInfo } from "../journal/types.js";
import type { HarnessEntry } from "./harness-entry.js";
import type { CancelOutcome, CancelRequest } from "./operation-types.js";
import type { OpContext } from "../obs/context.js";
import { actorDetail } from "./op-actor.js";
import type { PlacementState } from "./placement-state.js";

/** How often Cancel repeats a cross-host cancel request while the session stays held elsewhere (ms). */
const CANCEL_REPEAT_MS = 200;

/** Cancels (see the module comment) and logs one `session cancelled` line at info with the outcome. */
export async function cancelOp(state: PlacementState, req: CancelRequest): Promise<CancelOutcome> {
  const info = await state.session(req.session);
  const outcome = await cancelSession(state, req);
  state
    .opLog(req.ctx, req.session, info.harness, req.executionId)
    .info({ operation: "cancel", outcome }, "session cancelled");
  return outcome;
}

async function cancelSession(state: PlacementState, req: CancelRequest): Promise<CancelOutcome> {
  if (req.executionId) {
    const named = (await state.records.window(state.deps.journal, req.session)).log.execution(req.executionId);
    if (!named) throw new HostError(ErrorCode.NotFound, `session ${req.session} has no execution ${req.executionId}`);
    if (named.completed || !named.current) return "idle";
  }
  const local = state.running.cancel(req.session, req.reason);
  if (local) {
    await settledWithin(state, local, req.session);
    return "cancelled";
  }
  const holder = state.guard.holder(req.session);
  if (holder)
    throw new HostError(
      ErrorCode.SessionBusy,
      `session ${req.session} is busy (${holder} in progress, not a turn); retry`,
    );
  let release: () => Promise<void>;
  try {
    release = await state.hold(req.session, "cancel");
  } catch (err) {
    if (!isHostError(err, ErrorCode.SessionBusy) || !state.deps.journal.requestCancel) throw err;
    await cancelElsewhere(state, req);
    return "requested";
  }
  let batch: EffectBatch | undefined;
  try {
    const withdrawal = await withdrawWait(state, req);
    batch = withdrawal.batch;
    return withdrawal.outcome;
  } finally {
    await release();
    state.effects.dispatch(batch);
  }
}

/** A parked turn's own open wait is withdrawn; a decided one cannot be; otherwise nothing to do. */
async function withdrawWait(
  state: PlacementState,
  req: CancelRequest,
): Promise<{ outcome: CancelOutcome; batch?: EffectBatch | undefined }> {
  const { log } = await state.verifiedWindow(req.session);
  const plan = planWithdrawal(log, req.reason, req.identity);
  if (!plan) {
    const gate = log.ownUnreceiptedGate();
    if (gate)
      throw new HostError(
        ErrorCode.FailedPrecondition,
        `session ${req.session}'s wait (request seq ${gate.ref.requestSeq}) is already decided; resume continues the turn — a decided wait cannot be withdrawn`,
      );
    return { outcome: "idle" };
  }
  const fence = await state.mint(req.session);
  const records = await state.deps.journal.appendBatch(req.session, plan.head, fence, plan.events);
  state.noteAppended(req.session, records);
  state.history.forget(req.session);
  const batch = state.effects.batch(req.session);
  state.effects.audit(batch, records.at(-1), "wait.withdrawn", {
    execution_id: plan.ref.executionId,
    tool_call_id: plan.ref.toolCallId,
    request_seq: plan.ref.requestSeq,
    ...actorDetail(records.find((r) => r.event.actor !== undefined)),
  });
  return { outcome: "withdrawn", batch };
}

/** Waits (bounded) for a cancelled turn here to release the session. */
async function settledWithin(state: PlacementState, settled: Promise<void>, session: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), state.cancelWaitMs);
  });
  const late = await Promise.race([settled.then(() => false), expired]).finally(() => clearTimeout(timer));
  if (late)
    throw new HostError(
      ErrorCode.SessionBusy,
      `session ${session}'s turn was cancelled but has not released the session within ${state.cancelWaitMs} ms; retry Cancel`,
    );
}

/**
 * Another host holds the session: send the cancel request, repeating it every CANCEL_REPEAT_MS (a
 * request only reaches hosts listening when it is sent) until the session's lock is free, for at most
 * cancelWaitMs.
 */
async function cancelElsewhere(state: PlacementState, req: CancelRequest): Promise<void> {
  const journal = state.deps.journal;
  const deadline = Date.now() + state.cancelWaitMs;
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
        `the host running session ${req.session} did not release it within ${state.cancelWaitMs} ms of the cancel request; retry Cancel`,
      );
  }
}

/** Deletes the session for good; resolves to the session as it was. */
/** Deletes (see the module comment) and logs one `session deleted` line at info. */
export async function deleteOp(state: PlacementState, session: string, ctx?: OpContext): Promise<SessionInfo> {
  const holder = state.guard.holder(session);
  if (holder)
    throw new HostError(
      ErrorCode.SessionBusy,
      `session ${session} is busy (${holder} in progress); cancel its turn first (harnesshost cancel --session ${session})`,
    );
  let release: () => Promise<void>;
  try {
    release = await state.hold(session, "delete");
  } catch (err) {
    if (!isHostError(err, ErrorCode.SessionBusy)) throw err;
    throw new HostError(
      ErrorCode.SessionBusy,
      `session ${session} is busy on another host; cancel its turn first (harnesshost cancel --session ${session})`,
      { cause: err },
    );
  }
  try {
    const info = await state.session(session);
    await state.deps.journal.deleteSession(session);
    state.forget(session);
    // A live actor of the session (memory tier) is released; a harness no longer served has none here.
    let entry: HarnessEntry | undefined;
    try {
      entry = state.deps.harnesses.resolve(info.harness);
    } catch {
      entry = undefined;
    }
    await entry?.runtime.stop(session).catch(() => undefined);
    state
      .opLog(ctx, session, info.harness)
      .info({ operation: "delete", outcome: "deleted", last_seq: info.lastSeq }, "session deleted");
    return info;
  } finally {
    await release();
  }
}
