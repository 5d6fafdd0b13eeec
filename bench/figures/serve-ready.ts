// serve_ready_ms: a restart of `harnesshost serve` (the compiled bin, on the SQLite data directory its
// first, untimed start made; registry and HTTP listeners off) from spawn to its first gRPC Health
// SERVING, p50, against spawning `node -e 0` to its exit, alternating — what a host in a fleet pays
// each time it is restarted. The first start on an empty directory (which also creates the journal's
// file and schema) is in the details, measured the same way. Invariant: it measures the tree's own
// code — dist/ is first rebuilt (as the tests' global set-up does) when any source is newer than it.
import ensureDistCurrent from "../../test/support/dist-current.js";
import { nodeE0Ms, serveReadyMs } from "../lib/serve-ready.js";
import { scratchDir } from "../lib/tmp.js";
import { median, round, sampleOf } from "../lib/stats.js";
import type { Figure, FigureResult } from "../lib/types.js";

export const serveReady: Figure = {
  key: "serve_ready_ms",
  title: "harnesshost serve restarted: spawn to first Health SERVING (compiled bin), p50, vs node -e 0",
  timeoutMs: { quick: 300_000, full: 600_000 },
  async run(opts): Promise<FigureResult> {
    ensureDistCurrent();
    const runs = opts.quick ? 2 : 9;
    const data = scratchDir("serve-ready");
    const ready: number[] = [];
    const listening: number[] = [];
    const fresh: number[] = [];
    const base: number[] = [];
    try {
      await serveReadyMs(undefined, data.path); // makes the data directory; warms the page cache
      for (let i = 0; i < runs; i++) {
        const s = await serveReadyMs(undefined, data.path);
        ready.push(s.healthMs);
        listening.push(s.listeningMs);
        base.push(await nodeE0Ms());
        if (i % 3 === 0) fresh.push((await serveReadyMs()).healthMs);
      }
    } finally {
      data.dispose();
    }
    return {
      status: "ok",
      value: round(median(ready)),
      unit: "ms",
      measured: sampleOf(ready.map(round), "ms"),
      baseline: { ...sampleOf(base.map(round), "ms"), what: "node -e 0, spawn to exit" },
      ratio: round(median(ready) / median(base)),
      target: { op: "<=", value: 300 },
      details: {
        listeningLineMs: round(median(listening)),
        runs,
        emptyDataDirMs: round(median(fresh)),
        emptyDataDirRuns: fresh.length,
      },
    };
  },
};
