// serve_ready_ms: `harnesshost serve` (the compiled bin, SQLite in a fresh directory, registry and HTTP
// listeners off) from spawn to its first gRPC Health SERVING, p50, against spawning `node -e 0` to its
// exit, alternating, after one warm-up start (page cache). Invariant: it measures the tree's own code —
// dist/ is first rebuilt (tsc, as the tests' global set-up does) when any source is newer than it.
import ensureDistCurrent from "../../test/support/dist-current.js";
import { nodeE0Ms, serveReadyMs } from "../lib/serve-ready.js";
import { median, round, sampleOf } from "../lib/stats.js";
import type { Figure, FigureResult } from "../lib/types.js";

export const serveReady: Figure = {
  key: "serve_ready_ms",
  title: "harnesshost serve: spawn to first Health SERVING (compiled bin), p50, vs node -e 0",
  timeoutMs: { quick: 300_000, full: 600_000 },
  async run(opts): Promise<FigureResult> {
    ensureDistCurrent();
    const runs = opts.quick ? 2 : 9;
    await serveReadyMs();
    const ready: number[] = [];
    const listening: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < runs; i++) {
      const s = await serveReadyMs();
      ready.push(s.healthMs);
      listening.push(s.listeningMs);
      base.push(await nodeE0Ms());
    }
    return {
      status: "ok",
      value: round(median(ready)),
      unit: "ms",
      measured: sampleOf(ready.map(round), "ms"),
      baseline: { ...sampleOf(base.map(round), "ms"), what: "node -e 0, spawn to exit" },
      ratio: round(median(ready) / median(base)),
      target: { op: "<=", value: 300 },
      details: { listeningLineMs: round(median(listening)), runs },
    };
  },
};
