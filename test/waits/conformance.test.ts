// The durable-wait conformance checks run against the example harnesses of both tiers (ask: stateless,
// askcounter: memory) and are not planned for a harness without a REQUIRES_APPROVAL tool.
import { describe, expect, it } from "vitest";
import { openSuite, WAITS_CHECK_IDS } from "../../src/conformance/index.js";

async function runWaits(harness: string, tier: "stateless" | "memory") {
  const only = WAITS_CHECK_IDS.filter((id) => id.startsWith(`${tier}.`));
  const suite = await openSuite({ harness, only });
  try {
    expect(suite.tier).toBe(tier);
    const results = [];
    for (const check of suite.checks) results.push(await suite.run(check));
    return results;
  } finally {
    await suite.close();
  }
}

describe("waits conformance checks", () => {
  it.each([
    ["ask", "stateless"],
    ["askcounter", "memory"],
  ] as const)(
    "%s passes every %s waits check",
    async (harness, tier) => {
      const results = await runWaits(harness, tier);
      expect(results.map((r) => r.id)).toEqual(WAITS_CHECK_IDS.filter((id) => id.startsWith(`${tier}.`)));
      expect(results.filter((r) => r.status !== "pass").map((r) => `${r.id}: ${r.evidence}`)).toEqual([]);
      expect(results.find((r) => r.id.endsWith("zero-steps"))?.evidence).toContain("0 model calls");
    },
    120_000,
  );

  it("is not planned for a harness without a gated tool", async () => {
    const suite = await openSuite({ harness: "echo" });
    try {
      expect(suite.checks.map((c) => c.id).some((id) => id.includes("waits"))).toBe(false);
    } finally {
      await suite.close();
    }
  });
});
