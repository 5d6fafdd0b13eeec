// suspended_session_rss_bytes and live_echo_actor_rss_bytes: host memory retained per echo session that
// was suspended, and per echo session left live (actor in the local runtime plus its history cache), in
// an in-process host. Invariant: the heap is collected before each reading so deltas count what is
// retained, not garbage, and the per-session figure is the median of the growths across several equal
// batches after a first one (one-time allocations — caches reaching their shape, compiled code — land
// in the first batch, not on the sessions; a late release of something older, e.g. a previous figure's
// buffers, spoils one batch's delta, not the median). The value is heap + external bytes per session:
// RSS moves in whole heap pages, so its per-session delta is reported beside it in details.
import { openEchoHost } from "../lib/echo-host.js";
import { collector, settle } from "../lib/heap.js";
import { promptText } from "../lib/echo-turns.js";
import { median, round } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

export const sessionMemory: Figure = {
  key: "suspended_session_rss_bytes",
  extraKeys: ["live_echo_actor_rss_bytes"],
  title: "host memory per suspended session / per live echo actor",
  async run(opts: RunOptions): Promise<FigureResult> {
    const batch = opts.quick ? 10 : 250;
    const batches = opts.quick ? 2 : 5;
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
      /** Per-session heap and RSS growth of each batch after the first (collected before each reading). */
      const growth = async (run: (b: number) => Promise<void>): Promise<{ heap: number[]; rss: number[] }> => {
        await run(0);
        let prev = settle(gc);
        const out = { heap: [] as number[], rss: [] as number[] };
        for (let b = 1; b < batches; b++) {
          await run(b);
          const cur = settle(gc);
          out.heap.push((cur.heap - prev.heap) / batch);
          out.rss.push((cur.rss - prev.rss) / batch);
          prev = cur;
        }
        return out;
      };
      const suspended = await growth(suspendedBatch);
      const live = await growth(liveBatch);
      const perSuspended = median(suspended.heap);
      const perLive = median(live.heap);
      return {
        status: "ok",
        value: Math.round(perSuspended),
        unit: "bytes",
        details: {
          sessions: n,
          batchBytesPerSession: suspended.heap.map(Math.round).join(" / "),
          rssBytesPerSession: round(median(suspended.rss)),
          measure: "heapUsed+external after gc, median of batch growths",
          path: `in-process Host, ${host.runtime} runtime`,
        },
        also: {
          live_echo_actor_rss_bytes: {
            value: Math.round(perLive),
            unit: "bytes",
            details: {
              sessions: n,
              batchBytesPerSession: live.heap.map(Math.round).join(" / "),
              rssBytesPerSession: round(median(live.rss)),
              measure: "heapUsed+external after gc, median of batch growths",
            },
          },
        },
      };
    } finally {
      await host.close();
      dir.dispose();
    }
  },
};
