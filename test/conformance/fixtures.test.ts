// Harnesses that lie about their tier fail the conformance suite with the right check and a clear
// message (issue: tier conformance suite, "fixtures that must fail"), and the process exits non-zero.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { cli, failedIds, xmlProblem, type JsonReport } from "./helpers.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "hh-conf-fixtures-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function evidenceOf(report: JsonReport, id: string): string {
  return report.checks.find((c) => c.id === id)?.evidence ?? "";
}

describe("lying fixtures fail the suite", () => {
  it("secret-counter (STATELESS_REPLAY with a RAM counter) fails the host-restart check as a cold boot; the real process exits 1 and writes JUnit", async () => {
    const xmlFile = join(dir, "secret-counter.xml");
    const bin = join(process.cwd(), "bin", "harnesshost.js");
    const res = await run(process.execPath, [
      bin,
      "conformance",
      "--harness",
      "harnesses/fixtures/secret-counter.ts",
      "--reporter",
      "junit",
      "--out",
      xmlFile,
    ]).then(
      () => ({ code: 0, stdout: "" }),
      (err: { code?: number; stdout?: string }) => ({ code: err.code ?? -1, stdout: err.stdout ?? "" }),
    );
    expect(res.code).toBe(1);
    expect(res.stdout).toContain("FAIL stateless.restart-continues");
    const xml = readFileSync(xmlFile, "utf8");
    expect(xmlProblem(xml)).toBe("");
    // Replay runs every turn on one fresh actor, so it reproduces 1, 2, 3 and passes; the RAM state
    // shows wherever a turn lands on a fresh instance mid-history (restart, historical fork, resume).
    expect(xml).toMatch(/<testsuites [^>]*tests="8" failures="3" skipped="2"/);
    expect(xml.match(/<failure /g)).toHaveLength(3);
    expect(xml).toMatch(/name="stateless\.replay-byte-identical"[^>]*>\s*<system-out>/);
    expect(xml).toMatch(
      /name="stateless\.restart-continues"[^>]*>\s*<failure message="turn 4: expected &quot;4&quot; \(control\) got &quot;1&quot;: cold boot/,
    );
  }, 180_000);

  it("history-rebuilder (memory harness re-applying its history after restore) fails memory.restore-continues as double-applied history", async () => {
    const res = await cli("conformance", "--harness", "harnesses/fixtures/history-rebuilder.ts", "--reporter", "json");
    expect(res.code).toBe(1);
    const report = JSON.parse(res.out) as JsonReport;
    expect(report.tier).toBe("memory");
    expect(evidenceOf(report, "memory.restore-continues")).toBe(
      'turn 4: expected "4" (control) got "7": double-applied history — the 3 prior turns were applied again on top of the restored state',
    );
    // Every restore path shows the same signature; checks without a restore pass.
    expect(failedIds(report)).toEqual([
      "memory.restore-continues",
      "memory.restore-after-node-kill",
      "memory.fork-children",
      "memory.corrupt-snapshot-refused",
    ]);
    expect(
      report.checks.filter((c) => c.status === "fail").every((c) => c.evidence.includes("double-applied history")),
    ).toBe(true);
  }, 180_000);

  it("nondeterministic-model (model input carries a nonce) fails replay with the I0 message", async () => {
    const res = await cli(
      "conformance",
      "--harness",
      "harnesses/fixtures/nondeterministic-model.ts",
      "--reporter",
      "json",
    );
    expect(res.code).toBe(1);
    const report = JSON.parse(res.out) as JsonReport;
    expect(evidenceOf(report, "stateless.replay-byte-identical")).toMatch(
      /^I0 violated: on replay the harness sent a different model request/,
    );
    // The re-driven cut re-issues the request too, so it is caught there as well; continuity checks pass.
    expect(failedIds(report)).toEqual(["stateless.replay-byte-identical", "stateless.model-cut-redrive"]);
    expect(evidenceOf(report, "stateless.model-cut-redrive")).toMatch(/^I0 violated/);
  }, 180_000);

  it("seeded-random (randomness kept as state in RAM) fails memory.fork-randomness alone: both children draw the same value", async () => {
    const res = await cli("conformance", "--harness", "harnesses/fixtures/seeded-random.ts", "--reporter", "json");
    expect(res.code).toBe(1);
    const report = JSON.parse(res.out) as JsonReport;
    expect(failedIds(report)).toEqual(["memory.fork-randomness"]);
    expect(evidenceOf(report, "memory.fork-randomness")).toMatch(
      /^both children forked at seq \d+ drew "random:[0-9a-f]+": the generator's state was copied with the snapshot/,
    );
  }, 180_000);
});
