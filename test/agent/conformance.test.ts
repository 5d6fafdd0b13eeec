// Kit agents pass the stateless conformance tier (docs/conformance.md), the compaction check included:
// the notes agent, on the echo model, compacts within the probe, keeps Start.history bounded and
// replays across its compactions with zero model calls — the subject runs in a host-spawned node, so the
// window travels over the wire (incremental history included).
import { describe, expect, it } from "vitest";
import { runConformance } from "../../src/conformance/index.js";

describe("agent kit conformance", () => {
  it("kitAgentPassesStatelessTierIncludingCompactionWindow", async () => {
    const report = await runConformance({ harness: "notes" });
    expect(report.checks.filter((c) => c.status !== "pass").map((c) => `${c.id}: ${c.evidence}`)).toEqual([]);
    expect(report).toMatchObject({ tier: "stateless", failed: 0, skipped: 0, passed: 8 });
    const window = report.checks.find((c) => c.id === "stateless.compaction-window");
    expect(window?.evidence).toMatch(/\d+ turns, \d+ compactions \(first at seq \d+\); Start\.history ≤ \d+ events/);
    expect(window?.evidence).toContain("0 model calls");
  }, 300_000);
});
