// The reporters render one report faithfully: JSON with the documented fields, JUnit XML that is
// well-formed (even for evidence full of markup characters) with the right counts, and a pretty
// table listing every check. Also: the library example in docs/conformance.md is the file CI runs.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  jsonReport,
  junitReport,
  prettyReport,
  progressLine,
  summarize,
  type CheckResult,
} from "../../src/conformance/index.js";
import { xmlProblem } from "./helpers.js";

const checks: CheckResult[] = [
  {
    id: "memory.describe-valid",
    tier: "memory",
    title: "t",
    status: "pass",
    evidence: 'id "x" declares <memory> & more',
    durationMs: 12,
  },
  {
    id: "memory.restore-continues",
    tier: "memory",
    title: "t",
    status: "fail",
    evidence: 'turn 4: expected "4" (control) got "7": double-applied <history> & \u0001 \'q\'',
    durationMs: 1500,
  },
  {
    id: "memory.restore-after-node-kill",
    tier: "memory",
    title: "t",
    status: "skip",
    evidence: "not owned",
    durationMs: 0,
  },
];
const report = summarize("a<b>&c", "memory", "x", checks, 2345);

describe("conformance reporters", () => {
  it("summarize counts each status", () => {
    expect(report).toMatchObject({ passed: 1, failed: 1, skipped: 1 });
  });

  it("json carries harness, tier, counts and id/tier/status/evidence per check", () => {
    const doc = JSON.parse(jsonReport(report)) as Record<string, unknown>;
    expect(doc).toMatchObject({ harness: "a<b>&c", tier: "memory", passed: 1, failed: 1, skipped: 1 });
    expect(doc["checks"]).toEqual(
      checks.map((c) => ({
        id: c.id,
        tier: c.tier,
        status: c.status,
        evidence: c.evidence,
        duration_ms: c.durationMs,
      })),
    );
  });

  it("junit is well-formed XML with one failure and one skipped testcase", () => {
    const xml = junitReport(report);
    expect(xmlProblem(xml)).toBe("");
    expect(xml).toContain('<testsuites name="harnesshost conformance" tests="3" failures="1" skipped="1"');
    expect(xml.match(/<testcase /g)).toHaveLength(3);
    expect(xml.match(/<failure /g)).toHaveLength(1);
    expect(xml.match(/<skipped /g)).toHaveLength(1);
    expect(xml).toContain("double-applied &lt;history&gt; &amp;");
    expect(xml).not.toContain("\u0001");
  });

  it("the well-formedness check itself rejects broken XML", () => {
    expect(xmlProblem("<a><b></a>")).not.toBe("");
    expect(xmlProblem("<a>x & y</a>")).not.toBe("");
  });

  it("pretty lists every check with its result and the suite's wall time", () => {
    const text = prettyReport(report);
    for (const c of checks) expect(text).toContain(c.id);
    expect(text).toMatch(/FAILED: 1 passed, 1 failed, 1 skipped — a<b>&c \(memory, descriptor x\) in 2\.3s/);
    expect(progressLine({ type: "check-end", result: checks[1]!, index: 1, total: 3 })).toMatch(
      /^\[2\/3\] FAIL memory\.restore-continues \(1\.5s\) — turn 4/,
    );
  });

  it("docs/conformance.md shows exactly the library example CI runs", () => {
    const doc = readFileSync("docs/conformance.md", "utf8");
    const example = readFileSync("test/conformance/library-example.test.ts", "utf8");
    const block = /<!-- library-example -->\s*```ts\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block).toBe(example);
  });
});
