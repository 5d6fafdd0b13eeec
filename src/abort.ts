// Abort plumbing every layer shares. Invariant: a controller that follows a signal aborts with that
// signal's reason, at most once, and its listener on the signal is gone once it stops following — so a
// long-lived signal (a client's call, a host's shutdown) never collects listeners from turns that ended.
// It replaces AbortSignal.any([...]) on hot paths: one controller and one listener instead of a combined
// signal with weak-ref bookkeeping on every source (docs/performance.md, turn latency item 25).

/**
 * Aborts `target` with `source`'s reason when `source` aborts (at once if it already has); returns the
 * function that stops following (idempotent; call it when the follower's work is over).
 */
export function followAbort(source: AbortSignal, target: AbortController): () => void {
  const relay = (): void => {
    if (!target.signal.aborted) target.abort(source.reason);
  };
  if (source.aborted) {
    relay();
    return () => undefined;
  }
  source.addEventListener("abort", relay, { once: true });
  return () => source.removeEventListener("abort", relay);
}

/** A signal bounded in time, and the way to let go of it. */
export interface BoundedSignal {
  readonly signal: AbortSignal;
  /** Clears the timer and stops following the source (idempotent; call when the work is over). */
  done(): void;
}

/**
 * A signal that aborts when `source` does (with its reason), or after `ms` with `reason()`, whichever
 * comes first — one controller, one listener and one unref'd timer, all released by `done`. No timer
 * is armed when `source` has already aborted.
 */
export function boundedSignal(source: AbortSignal | undefined, ms: number, reason: () => unknown): BoundedSignal {
  const bound = new AbortController();
  const unfollow = source === undefined ? () => undefined : followAbort(source, bound);
  if (bound.signal.aborted) return { signal: bound.signal, done: unfollow };
  const timer = setTimeout(() => bound.abort(reason()), ms);
  timer.unref();
  return {
    signal: bound.signal,
    done: () => {
      clearTimeout(timer);
      unfollow();
    },
  };
}
