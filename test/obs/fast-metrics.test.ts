// src/obs/fast-metrics.ts renders what prom-client's own Counter and Histogram render for the same
// names, labels, buckets and observations — the scrape format does not change with the hot path.
import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { FastCounter, FastHistogram } from "../../src/obs/fast-metrics.js";

const BUCKETS = [0.001, 0.01, 0.1, 1];
const OBSERVED: [string, string, number][] = [
  ["a", "x", 0.0005],
  ["a", "x", 0.001],
  ["a", "x", 0.5],
  ["b", "y", 7],
  ["a", "x", 0.02],
];

describe("fast metrics", () => {
  it("fastMetricsRenderWhatPromClientRenders", async () => {
    const prom = new Registry();
    const pc = new Counter({ name: "t_things_total", help: "things", labelNames: ["h", "k"], registers: [prom] });
    const ph = new Histogram({
      name: "t_seconds",
      help: "secs",
      labelNames: ["h", "k"],
      buckets: BUCKETS,
      registers: [prom],
    });
    const fast = new Registry();
    const fc = new FastCounter("t_things_total", "things", ["h", "k"], fast);
    const fh = new FastHistogram("t_seconds", "secs", ["h", "k"], fast, BUCKETS);
    for (const [h, k, v] of OBSERVED) {
      pc.labels(h, k).inc(2);
      ph.labels(h, k).observe(v);
      fc.child(h, k).inc(2);
      fh.child(h, k).observe(v);
    }
    expect(await fast.metrics()).toBe(await prom.metrics());
  });

  it("aBoundChildAccumulatesAndResetClearsIt", async () => {
    const registry = new Registry();
    const c = new FastCounter("t_total", "t", ["backend"], registry);
    const child = c.child("sqlite");
    child.inc();
    child.inc(4);
    expect(await registry.metrics()).toContain('t_total{backend="sqlite"} 5');
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain("sqlite");
  });
});
