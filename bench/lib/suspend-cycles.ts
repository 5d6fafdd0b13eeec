// Traced suspend + resume cycles for the suspend profiles: each cycle is one Spans operation with the
// suspend, the resume, their sum and the journal's per-method tally; `between` runs after every cycle,
// outside the operation. Invariant: the first `warmup` cycles run the same path but do not count.
import type { Host } from "../../src/host/index.js";
import type { Spans } from "./spans.js";
import type { Tally } from "./timed.js";

export interface SuspendCycles {
  host: Host;
  session: string;
  signal: AbortSignal;
  spans: Spans;
  /** The tally the host's journal is timed into (bench/lib/timed.ts). */
  tally: Tally;
  /** Cycles that count, after the warm-up. */
  cycles: number;
  warmup?: number;
  /** Run after each cycle, untimed (a turn, so the next suspend has new state to store). */
  between(): Promise<unknown>;
}

export async function traceSuspendCycles(o: SuspendCycles): Promise<void> {
  const warmup = o.warmup ?? 5;
  for (let i = 0; i < o.cycles + warmup; i++) {
    o.spans.begin();
    o.tally.reset();
    const t0 = performance.now();
    await o.host.placer.suspend(o.session, o.signal);
    const t1 = performance.now();
    await o.host.placer.resume(o.session, o.signal);
    const t2 = performance.now();
    o.spans.add("cycle.total", t2 - t0);
    o.spans.add("cycle.suspend", t1 - t0);
    o.spans.add("cycle.resume", t2 - t1);
    for (const [m, v] of o.tally.byMethod) o.spans.add(`journal.${m} x${v.calls}`, v.ms);
    o.spans.end(i >= warmup);
    await o.between();
  }
}
