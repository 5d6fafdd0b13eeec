// The opt-in upgrade checks of the conformance suite (docs/versioning.md, docs/conformance.md): run
// when named with --check, against a stateless built-in (echo) and a memory one (counter). Each drives
// version "1", is refused by an incompatible "2" with the journal unchanged, and continues like the
// control after a compatible "2".
import { describe, expect, it } from "vitest";
import { CHECK_IDS, runConformance, UPGRADE_CHECK_IDS } from "../../src/conformance/index.js";

describe("conformance upgrade checks", () => {
  it("are opt-in: not among the default checks, known to --check", () => {
    expect(UPGRADE_CHECK_IDS).toEqual(["stateless.upgrade", "memory.upgrade"]);
    for (const id of UPGRADE_CHECK_IDS) expect(CHECK_IDS).not.toContain(id);
  });

  it("statelessUpgradeCheckPassesEcho", async () => {
    const report = await runConformance({ harness: "echo", only: ["stateless.upgrade"] });
    expect(report).toMatchObject({ tier: "stateless", passed: 1, failed: 0 });
    const evidence = report.checks[0]?.evidence ?? "";
    expect(evidence).toMatch(/incompatible "2" refused \(diverged: replay diverged at seq \d+/);
    expect(evidence).toContain("hashes unchanged");
    expect(evidence).toMatch(/compatible "2" upgraded at seq \d+; turn 4 "echo:turn-4" = control/);
  }, 180_000);

  it("memoryUpgradeCheckPassesCounter", async () => {
    const report = await runConformance({ harness: "counter", only: ["memory.upgrade"] });
    expect(report).toMatchObject({ tier: "memory", passed: 1, failed: 0 });
    const evidence = report.checks[0]?.evidence ?? "";
    expect(evidence).toContain('snapshot: written by harness version "1"');
    expect(evidence).toContain('turn 4 "4" = control');
  }, 180_000);
});
