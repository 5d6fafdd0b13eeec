// A harness's run, bounded by its turn's signal. Invariant: a turn is over no later than its signal
// fires (the client left, Cancel, or turnMs), whether or not the harness honours the signal. What a
// runaway harness does afterwards cannot reach the journal (its sink is closed when the turn ends, so
// every later call is refused) and cannot take the host down (its late settlement is absorbed here).
import { ErrorCode, HostError } from "../errors/index.js";

/** Settles with `run`, or rejects with the signal's reason as soon as the signal fires. */
export function boundedRun(run: Promise<void>, signal: AbortSignal): Promise<void> {
  // The harness's own outcome may arrive after we stopped waiting for it: never an unhandled rejection.
  run.catch(() => undefined);
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    run.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new HostError(ErrorCode.Cancelled, "turn cancelled");
}
