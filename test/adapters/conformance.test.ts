// The framework adapters' example agents pass the stateless conformance tier (docs/conformance.md) as
// `harnesshost conformance --harness FILE` runs it: each in a host-spawned node, on the echo model,
// compaction window included.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runConformance } from "../../src/conformance/index.js";

describe.each(["ai-sdk-agent.ts", "openai-agents-agent.ts"])("docs/examples/%s", (file) => {
  it("theExampleAgentPassesTheStatelessTier", async () => {
    const report = await runConformance({
      harness: fileURLToPath(new URL(`../../docs/examples/${file}`, import.meta.url)),
    });
    expect(report.checks.filter((c) => c.status !== "pass").map((c) => `${c.id}: ${c.evidence}`)).toEqual([]);
    expect(report).toMatchObject({ tier: "stateless", failed: 0 });
  }, 300_000);
});
