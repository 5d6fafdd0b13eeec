// One-shot callbacks per session, for an operation that waits on another's progress (Cancel waiting
// for a holder to let go). Invariant: `fire` runs each callback registered
// before it exactly once and forgets them; a stopped callback never runs; nothing is kept for a
// session without callbacks.
export class SessionWatchers {
  private readonly bySession = new Map<string, Set<() => void>>();

  /** Runs `callback` at the session's next `fire`; returns the function that stops watching. */
  watch(session: string, callback: () => void): () => void {
    const set = this.bySession.get(session) ?? new Set<() => void>();
    this.bySession.set(session, set);
    set.add(callback);
    return () => {
      set.delete(callback);
      if (set.size === 0 && this.bySession.get(session) === set) this.bySession.delete(session);
    };
  }

  fire(session: string): void {
    const set = this.bySession.get(session);
    this.bySession.delete(session);
    for (const callback of set ?? []) callback();
  }
}
