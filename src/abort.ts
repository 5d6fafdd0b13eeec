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
