// Memory readings for the per-session figures. Invariant: every reading is taken after two full
// collections, so a delta between readings counts what is retained, not garbage.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** A function that runs a full GC (`--expose-gc` is switched on at run time when the process lacks it). */
export function collector(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/** RSS and heapUsed + external after two collections. */
export function settle(gc: () => void): { rss: number; heap: number } {
  gc();
  gc();
  const m = process.memoryUsage();
  // `external` already includes `arrayBuffers`.
  return { rss: m.rss, heap: m.heapUsed + m.external };
}
