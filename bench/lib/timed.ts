// Per-method time accounting for the end-to-end figures' breakdowns: a proxy that forwards every call
// unchanged and adds the wall time of each async method to a tally. Invariant: the proxy changes no
// behaviour (same arguments, same results, same errors, same `this`); it only observes.
export interface Tally {
  /** method name → calls and total ms since the last reset. */
  readonly byMethod: Map<string, { calls: number; ms: number }>;
  reset(): void;
  /** Total ms of the named methods (all when none named). */
  ms(...methods: string[]): number;
  calls(...methods: string[]): number;
}

export function newTally(): Tally {
  const byMethod = new Map<string, { calls: number; ms: number }>();
  const pick = (methods: string[]) =>
    [...byMethod.entries()].filter(([k]) => methods.length === 0 || methods.includes(k)).map(([, v]) => v);
  return {
    byMethod,
    reset: () => byMethod.clear(),
    ms: (...methods) => pick(methods).reduce((n, v) => n + v.ms, 0),
    calls: (...methods) => pick(methods).reduce((n, v) => n + v.calls, 0),
  };
}

/** `target` with every method timed into `tally` (sync methods count calls, async ones until settled). */
export function timed<T extends object>(target: T, tally: Tally): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value: unknown = Reflect.get(obj, prop, receiver);
      if (typeof value !== "function" || typeof prop !== "string" || prop === "constructor") return value;
      const fn = value as (...args: unknown[]) => unknown;
      return function (this: unknown, ...args: unknown[]): unknown {
        const t0 = performance.now();
        const note = () => {
          const entry = tally.byMethod.get(prop) ?? { calls: 0, ms: 0 };
          entry.calls += 1;
          entry.ms += performance.now() - t0;
          tally.byMethod.set(prop, entry);
        };
        const out = fn.apply(this === receiver ? obj : this, args);
        if (out instanceof Promise) return out.finally(note);
        note();
        return out;
      };
    },
  });
}
