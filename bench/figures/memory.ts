// suspended_session_rss_bytes and live_echo_actor_rss_bytes: host memory retained per echo session that
// was suspended, and per echo session left live (actor in the local runtime plus its history cache), in
// an in-process host. Invariant: the heap is collected before each reading so deltas count what is
// retained, not garbage, and the per-session figure is the growth between the first and the last of
// several equal batches (one-time allocations — caches reaching their shape, compiled code — land in
// the first batch, not on the sessions). The value is heap + external bytes per session: RSS moves in
// whole heap pages, so its per-session delta is reported beside it in details.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { openEchoHost } from "../lib/echo-host.js";
import { promptText } from "../lib/echo-turns.js";
import { round } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

function collector(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

function settle(gc: () => void): { rss: number; heap: number } {
  gc();
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed + m.external + m.arrayBuffers };
}

export const sessionMemory: Figure = {
  key: "suspended_session_rss_bytes",
  extraKeys: ["live_echo_actor_rss_bytes"],
  title: "host memory per suspended session / per live echo actor",
  async run(opts: RunOptions): Promise<FigureResult> {
    const batch = opts.quick ? 10 : 250;
    const batches = opts.quick ? 2 : 4;
    const n = batch * (batches - 1);
    const gc = collector();
    const dir = scratchDir("memory");
    const host = await openEchoHost(dir.path);
    try {
      // Warm every code path once so first-use allocations are not charged to the sessions.
      const warm = await host.newSession();
      await host.turn(warm, promptText(0));
      const suspendedBatch = async (b: number): Promise<void> => {
        for (let i = 0; i < batch; i++) {
          const uid = await host.newSession();
          await host.turn(uid, promptText(b * batch + i));
          await host.suspend(uid);
        }
      };
      const liveBatch = async (b: number): Promise<void> => {
        for (let i = 0; i < batch; i++) await host.turn(await host.newSession(), promptText(b * batch + i));
      };
      await suspendedBatch(0);
      const before = settle(gc);
      for (let b = 1; b < batches; b++) await suspendedBatch(b);
      const afterSuspended = settle(gc);
      await liveBatch(0);
      const liveBefore = settle(gc);
      for (let b = 1; b < batches; b++) await liveBatch(b);
      const afterLive = settle(gc);
      const perSuspended = (afterSuspended.heap - before.heap) / n;
      const perLive = (afterLive.heap - liveBefore.heap) / n;
      return {
        status: "ok",
        value: Math.round(perSuspended),
        unit: "bytes",
        details: { sessions: n, rssBytesPerSession: round((afterSuspended.rss - before.rss) / n), measure: "heapUsed+external after gc", path: `in-process Host, ${host.runtime} runtime` },
        also: {
          live_echo_actor_rss_bytes: {
            value: Math.round(perLive),
            unit: "bytes",
            details: { sessions: n, rssBytesPerSession: round((afterLive.rss - liveBefore.rss) / n), measure: "heapUsed+external after gc" },
          },
        },
      };
    } finally {
      await host.close();
      dir.dispose();
    }
  },
};
