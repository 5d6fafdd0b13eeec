// The built-in harnesses pass the conformance suite through the CLI (issue: tier conformance suite):
// echo (stateless) with the JSON reporter, counter (memory) with the pretty reporter, and a harness
// given as a module path.
import { describe, expect, it } from "vitest";
import { CHECK_IDS } from "../../src/conformance/index.js";
import { cli, type JsonReport } from "./helpers.js";

const stateless = CHECK_IDS.filter((id) => id.startsWith("stateless."));
const memory = CHECK_IDS.filter((id) => id.startsWith("memory."));

describe("harnesshost conformance on the built-ins", () => {
  it("echo: every stateless check passes, JSON report, exit 0", async () => {
    const res = await cli("conformance", "--harness", "echo", "--reporter", "json");
    const report = JSON.parse(res.out) as JsonReport;
    expect(report).toMatchObject({
      harness: "echo",
      tier: "stateless",
      failed: 0,
      // echo never compacts: stateless.compaction-window is skipped with that reason.
      skipped: 1,
      passed: stateless.length - 1,
    });
    expect(report.checks.map((c) => c.id)).toEqual(stateless);
    const replay = report.checks.find((c) => c.id === "stateless.replay-byte-identical");
    expect(replay?.evidence).toContain("model calls during replay: 0");
    expect(res.code).toBe(0);
    expect(res.err).toContain("PASS stateless.model-cut-redrive");
    expect(report.checks.find((c) => c.id === "stateless.compaction-window")?.evidence).toContain(
      "the harness does not compact",
    );
  }, 180_000);

  it("counter: every memory check passes, pretty table with wall time, exit 0", async () => {
    const res = await cli("conformance", "--harness", "counter", "--tier", "auto", "--turns", "3", "--forks", "2");
    expect(res.code).toBe(0);
    for (const id of memory) expect(res.out).toMatch(new RegExp(`^${id.replace(/\./g, "\\.")}\\s+memory\\s+PASS`, "m"));
    expect(res.out).toMatch(/OK: 8 passed, 0 failed, 0 skipped — counter \(memory, descriptor counter\) in \d+\.\ds/);
    expect(res.out).toContain('turn 4 "4" = control');
  }, 180_000);

  it("a harness module path is served by a spawned node and passes", async () => {
    const only = ["stateless.describe-valid", "stateless.replay-byte-identical", "stateless.suspend-resume"];
    const res = await cli(
      "conformance",
      "--harness",
      "harnesses/echoagent/index.ts",
      "--reporter",
      "json",
      ...only.flatMap((id) => ["--check", id]),
    );
    const report = JSON.parse(res.out) as JsonReport;
    expect(report).toMatchObject({ tier: "stateless", failed: 0, passed: only.length });
    expect(report.checks.map((c) => c.id)).toEqual(only);
    expect(res.code).toBe(0);
  }, 180_000);

  it("bad flags are usage errors (exit 2) and nothing runs", async () => {
    expect((await cli("conformance", "--harness", "echo", "--reporter", "xml")).code).toBe(2);
    expect((await cli("conformance", "--harness", "echo", "--turns", "1")).code).toBe(2);
    expect((await cli("conformance")).code).toBe(2);
    const unknown = await cli("conformance", "--harness", "echo", "--check", "stateless.nope");
    expect(unknown).toMatchObject({ code: 2 });
    expect(unknown.err).toContain("unknown check id(s): stateless.nope");
  });
});
