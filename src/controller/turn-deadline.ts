// The host-side deadline of one turn (limit turnMs). Invariant: every turn the Placer runs gets a
// signal that fires when its caller goes or when turnMs has passed, whichever comes first; the
// deadline's abort reason is DEADLINE_EXCEEDED naming the limit, and its timer never outlives the turn.
import { ErrorCode, HostError } from "../errors/index.js";

export interface TurnDeadline {
  readonly signal: AbortSignal;
  /** Clears the timer (call when the turn is over, whatever its outcome). */
  done(): void;
}

export function turnDeadline(caller: AbortSignal, turnMs: number): TurnDeadline {
  const bound = new AbortController();
  const timer = setTimeout(
    () => bound.abort(new HostError(ErrorCode.DeadlineExceeded, `turn exceeded its deadline turnMs=${turnMs} ms`)),
    turnMs,
  );
  timer.unref();
  return { signal: AbortSignal.any([caller, bound.signal]), done: () => clearTimeout(timer) };
}
