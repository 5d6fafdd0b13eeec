// serve's process_* and nodejs_* families (src/obs/metrics.ts, collectProcessMetricsSoon): added a while
// after ready so the first requests do not wait for prom-client's process metrics to load, yet a scrape
// never misses them — the first render adds them when their timer has not yet.
import { describe, expect, it } from "vitest";
import { HostMetrics } from "../../src/obs/metrics.js";

const RESIDENT = "harnesshost_process_resident_memory_bytes";

describe("process metric families", () => {
  it("aHostThatDoesNotAskRendersNoProcessFamily", async () => {
    expect(await new HostMetrics().render()).not.toContain("harnesshost_process_");
  });

  it("theFirstRenderAddsThemBeforeTheirTimerAndOnlyOnce", async () => {
    const metrics = new HostMetrics();
    metrics.collectProcessMetricsSoon(3_600_000);
    expect(metrics.families.getSingleMetric(RESIDENT)).toBeUndefined();
    expect(await metrics.render()).toContain(`${RESIDENT} `);
    // Again (render, then the direct call): registering the families twice would throw.
    expect(await metrics.render()).toContain(`${RESIDENT} `);
    metrics.collectProcessMetrics();
  });

  it("theirTimerAddsThemWithoutARender", async () => {
    const metrics = new HostMetrics();
    metrics.collectProcessMetricsSoon(1);
    const deadline = Date.now() + 10_000;
    while (metrics.families.getSingleMetric(RESIDENT) === undefined && Date.now() < deadline)
      await new Promise((r) => setImmediate(r));
    expect(metrics.families.getSingleMetric(RESIDENT)).toBeDefined();
  });
});
