// Cancel (docs/protocol.md §17) and Delete (§18). Invariants: Cancel's answer is what happened. It
// stops the session's turn — here by aborting its signal (a turn is registered from the moment it takes
// this host's guard, so no hold of a turn escapes it), on another host sharing the journal by asking it
// (repeatedly) — and returns once the turn released the session, its ERROR {CANCELLED} recorded (a turn
// stopped before it held the session appends nothing, and Cancel goes on to act on the session itself);
// whatever else holds the session (here or elsewhere) it waits for, within cancelWaitMs, and then takes
// the session itself: a parked turn's own open wait is withdrawn under that hold; anything else (no
// turn, a completed, interrupted or superseded one, an inherited wait) is a no-op; a holder that
// outlasts the bound is ABORTED, named, with nothing changed. Delete is refused (ABORTED) while any
// operation holds the session here or elsewhere, and then drops its records, checkpoint rows, this
// host's caches and live actor.
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
  const info = await state.session(req.session, req.ctx);
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
  // Whatever holds the session, Cancel waits for it (at most cancelWaitMs) and then acts itself, so
  // its answer is what happened: a turn stopped, a wait withdrawn, nothing to do — or ABORTED naming
  // the holder that outlasted the bound (§17.1 rule 7, §17.2).
  const deadline = Date.now() + state.cancelWaitMs;
  let asked = false;
  let stopped = false;
  for (;;) {
    const local = state.running.cancel(req.session, req.reason, req.ctx?.actor);
    if (local) {
      if (await settledWithin(state, local, req.session)) return "cancelled";
      // The turn stopped before it held the session (cancelled during its lock's round trip, or refused
      // the lock): what holds the session now, or what it left, is acted on as below.
      stopped = true;
      continue;
    }
    const holder = state.guard.holder(req.session);
    if (holder) {
      // Another operation here, not a turn (a turn is registered with its guard): wait for it to end.
      if (!(await releasedHere(state, req.session, deadline)))
        throw new HostError(
          ErrorCode.SessionBusy,
          `session ${req.session} is busy (${holder} in progress, not a turn) and was not released within ${state.cancelWaitMs} ms; nothing was cancelled — retry Cancel`,
        );
      continue;
    }
    let release: () => Promise<void>;
    try {
      release = await state.hold(req.session, "cancel");
    } catch (err) {
      if (!isHostError(err, ErrorCode.SessionBusy) || !state.deps.journal.requestCancel) throw err;
      if (state.guard.holder(req.session)) continue;
      await askElsewhere(state, req, deadline);
      asked = true;
      continue;
    }
    let batch: EffectBatch | undefined;
    try {
      const withdrawal = await withdrawWait(state, req);
      batch = withdrawal.batch;
      if (withdrawal.outcome !== "idle") return withdrawal.outcome;
      // Nothing to withdraw: asked, the other host's turn stopped (or had ended) and let go; or a turn
      // here stopped before it began.
      return asked ? "requested" : stopped ? "cancelled" : "idle";
    } finally {
      await release();
      state.effects.dispatch(batch);
    }
  }
}

/** Resolves true once the session's holder here let it go, false at the deadline. */
async function releasedHere(state: PlacementState, session: string, deadline: number): Promise<boolean> {
  const wait = deadline - Date.now();
  if (wait <= 0) return false;
  let stop: () => void = () => undefined;
  let timer: NodeJS.Timeout | undefined;
  const released = await new Promise<boolean>((resolve) => {
    stop = state.guard.watch(session, () => resolve(true));
    timer = setTimeout(() => resolve(false), wait);
  });
  clearTimeout(timer);
  stop();
  return released;
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
    ...actorDetail(records.find((r) => r.event.actor !== undefined)?.event.actor),
  });
  return { outcome: "withdrawn", batch };
}

/**
 * Waits (bounded) for a cancelled turn here to release the session; resolves true if the turn had begun,
 * false if it stopped before it held the session.
 */
async function settledWithin(state: PlacementState, settled: Promise<boolean>, session: string): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), state.cancelWaitMs);
  });
  const began = await Promise.race([settled, expired]).finally(() => clearTimeout(timer));
  if (began === "late")
    throw new HostError(
      ErrorCode.SessionBusy,
      `session ${session}'s turn was cancelled but has not released the session within ${state.cancelWaitMs} ms; the cancellation stays in force — retry Cancel`,
    );
  return began;
}

/**
 * Another host holds the session: send the cancel request (it stops a turn running there) and pause
 * CANCEL_REPEAT_MS before the caller tries the session's lock again — a request only reaches hosts
 * listening when it is sent, so it is repeated with every try. Past the deadline: ABORTED.
 */
async function askElsewhere(state: PlacementState, req: CancelRequest, deadline: number): Promise<void> {
  const left = deadline - Date.now();
  if (left <= 0)
    throw new HostError(
      ErrorCode.SessionBusy,
      `session ${req.session} is held on another host and was not released within ${state.cancelWaitMs} ms of the cancel request: not a turn there (a turn stops on the request) but a Suspend, Fork, Approve, Delete or Upgrade, or a host not listening; nothing was cancelled here — retry Cancel`,
    );
  await state.deps.journal.requestCancel?.(req.session, req.reason);
  await new Promise((resolve) => setTimeout(resolve, Math.min(CANCEL_REPEAT_MS, left)));
}

/** Deletes the session for good; resolves to the session as it was. */
/** Deletes (see the module comment) and logs one `session deleted` line at info. */
export async function deleteOp(state: PlacementState, session: string, ctx?: OpContext): Promise<SessionInfo> {
  await state.admit(session, ctx);
  const batch = state.effects.batch(session);
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
    const info = await state.session(session, ctx);
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
    // The records are gone; the audit line (at the head the session was deleted at) is what remains.
    state.effects.audit(batch, { seq: info.lastSeq }, "session.deleted", {
      last_seq: info.lastSeq,
      ...actorDetail(ctx?.actor),
    });
    return info;
  } finally {
    await release();
    state.effects.dispatch(batch);
  }
}
