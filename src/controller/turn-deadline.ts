// The host-side deadline of one turn (limit turnMs). Invariant: every turn the Placer runs gets a
// signal that fires when its caller goes or when turnMs has passed, whichever comes first; the
// deadline's abort reason is DEADLINE_EXCEEDED naming the limit, and neither its timer nor its listener
// on the caller's signal outlives the turn.
import { boundedSignal } from "../abort.js";
import { ErrorCode, HostError } from "../errors/index.js";

export interface TurnDeadline {
  readonly signal: AbortSignal;
  /** Clears the timer (call when the turn is over, whatever its outcome). */
  done(): void;
}

export function turnDeadline(caller: AbortSignal, turnMs: number): TurnDeadline {
  // One controller that follows the caller (a listener, removed by done) instead of
  // AbortSignal.any([caller, bound]): the same signal, reasons and order, without the combined signal's
  // extra allocation and weak-ref bookkeeping on every turn.
  return boundedSignal(
    caller,
    turnMs,
    () => new HostError(ErrorCode.DeadlineExceeded, `turn exceeded its deadline turnMs=${turnMs} ms`),
  );
}
