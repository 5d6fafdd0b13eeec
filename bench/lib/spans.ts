// Wall-clock spans for the profile scripts: prototype methods wrapped with timers that add into the
// current operation's totals, and a per-operation median print. Invariant: observes only — a wrapped
// method returns (or resolves to) exactly what the original does.
import { median } from "./stats.js";

export class Spans {
  readonly #done = new Map<string, number[]>();
  #current = new Map<string, number>();

  /** Adds `ms` to `name` in the current operation. */
  add(name: string, ms: number): void {
    this.#current.set(name, (this.#current.get(name) ?? 0) + ms);
  }

  /** Wraps `proto`'s methods `names` so each call adds its wall time (to settlement, if async) as `prefix.name`. */
  wrap(proto: object, names: readonly string[], prefix: string): void {
    const p = proto as Record<string, unknown>;
    for (const name of names) {
      const fn = p[name];
      if (typeof fn !== "function") throw new Error(`${prefix}.${name} is not a method`);
      const spans = this;
      p[name] = function (this: unknown, ...args: unknown[]) {
        const t0 = performance.now();
        const out: unknown = fn.apply(this, args);
        if (out instanceof Promise) return out.finally(() => spans.add(`${prefix}.${name}`, performance.now() - t0));
        spans.add(`${prefix}.${name}`, performance.now() - t0);
        return out;
      };
    }
  }

  /** Starts an operation: spans that ended since the last one are not counted. */
  begin(): void {
    this.#current = new Map();
  }

  /** Ends an operation; its totals count when `keep` is true (past the warm-up). */
  end(keep: boolean): void {
    if (keep) for (const [k, v] of this.#current) (this.#done.get(k) ?? this.#done.set(k, []).get(k)!).push(v);
    this.#current = new Map();
  }

  /** One line per span: its median per operation, in ms. */
  print(): void {
    for (const [k, v] of [...this.#done].sort(([a], [b]) => a.localeCompare(b)))
      console.log(`${k.padEnd(44)} ${median(v).toFixed(3)} ms  (n=${v.length})`);
  }
}
