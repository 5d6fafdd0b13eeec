// bench:compare's verdict (bench/lib/compare.ts): medians of each side's runs, compared in the key's
// direction, flagged only past 10 % worse, and a key a side did not measure reported, never judged.
// Hand-made reports; nothing here runs or times a benchmark.
import { describe, expect, it } from "vitest";
import {
  betterOf,
  compareRuns,
  comparisonTable,
  exitCodeOf,
  parseCompareFlags,
  unknownKeysOf,
  worseBy,
} from "../../bench/lib/compare.js";
import type { BenchReport, KeyReport } from "../../bench/lib/types.js";

const IDS = { baseRef: "v1", baseCommit: "a".repeat(40), currentCommit: "b".repeat(40), currentDirty: false };

function ok(value: number, op?: ">=" | "<=", measured?: number): KeyReport {
  return {
    status: "ok",
    title: "t",
    value,
    unit: "×",
    ...(op ? { target: { op, value: 1 } } : {}),
    ...(measured !== undefined ? { measured: { median: measured, n: 3, unit: "appends/s" } } : {}),
  };
}

function report(figures: Record<string, KeyReport>): BenchReport {
  return { version: 1, quick: false, startedAt: "", durationMs: 0, node: "", platform: "", cpus: 2, figures };
}

const runs = (key: string, values: number[], op?: ">=" | "<="): BenchReport[] =>
  values.map((v) => report({ [key]: ok(v, op) }));

describe("bench:compare verdict", () => {
  it("comparesTheMedianOfEachSidesRunsNotAnySingleRun", () => {
    const c = compareRuns(
      ["x_ratio"],
      runs("x_ratio", [1, 5, 1.1], ">="),
      runs("x_ratio", [0.2, 1.05, 1.2], ">="),
      IDS,
    );
    const [k] = c.keys;
    expect(k?.base.median).toBe(1.1);
    expect(k?.current.median).toBe(1.05);
    expect(k?.ratio).toBeCloseTo(1.05 / 1.1);
    expect(k?.flagged).toBe(false);
    expect(c.runsPerSide).toBe(3);
  });

  it("flagsAHigherIsBetterFigureOnlyWhenItFellByMoreThanTenPercent", () => {
    const fell11 = compareRuns(["a"], runs("a", [100, 100, 100], ">="), runs("a", [89, 89, 89], ">="), IDS);
    const fell9 = compareRuns(["a"], runs("a", [100, 100, 100], ">="), runs("a", [91, 91, 91], ">="), IDS);
    const rose = compareRuns(["a"], runs("a", [100, 100, 100], ">="), runs("a", [150, 150, 150], ">="), IDS);
    expect(fell11.flagged).toEqual(["a"]);
    expect(fell9.flagged).toEqual([]);
    expect(rose.flagged).toEqual([]);
    expect(rose.keys[0]?.worseBy).toBeCloseTo(-0.5);
  });

  it("flagsALowerIsBetterFigureWhenItRoseByMoreThanTenPercent", () => {
    const rose = compareRuns(["p"], runs("p", [2, 2, 2], "<="), runs("p", [2.3, 2.3, 2.3], "<="), IDS);
    const fell = compareRuns(["p"], runs("p", [2, 2, 2], "<="), runs("p", [1, 1, 1], "<="), IDS);
    expect(rose.flagged).toEqual(["p"]);
    expect(rose.keys[0]?.better).toBe("lower");
    expect(fell.flagged).toEqual([]);
  });

  it("takesAKeysDirectionFromItsTargetElseFromItsName", () => {
    expect(betterOf("whatever", ok(1, "<="))).toBe("lower");
    expect(betterOf("whatever_ms", ok(1, ">="))).toBe("higher");
    expect(betterOf("suspend_resume_p50_ms", ok(1))).toBe("lower");
    expect(betterOf("group_commit_p99_ratio", ok(1))).toBe("lower");
    expect(betterOf("snapshot_bytes", undefined)).toBe("lower");
    expect(betterOf("group_commit_appends_per_s", ok(1))).toBe("higher");
    expect(worseBy(10, 12, "lower")).toBeCloseTo(0.2);
    expect(worseBy(10, 12, "higher")).toBeCloseTo(-0.2);
    expect(worseBy(0, 1, "higher")).toBeNaN();
  });

  it("reportsAKeyASideDidNotMeasureWithoutJudgingIt", () => {
    const base = [report({}), report({})];
    const current = [report({ k: ok(1, ">=") }), report({ k: { status: "unavailable", title: "t", reason: "no pg" } })];
    const c = compareRuns(["k"], base, current, IDS);
    const [k] = c.keys;
    expect(k?.flagged).toBe(false);
    expect(k?.ratio).toBeNaN();
    expect(k?.base.missing).toEqual(["not a key of this tree's bench", "not a key of this tree's bench"]);
    expect(k?.current.values).toEqual([1]);
    expect(k?.current.missing).toEqual(["unavailable: no pg"]);
    expect(c.flagged).toEqual([]);
    expect(comparisonTable(c)).toContain("not measured (not a key of this tree's bench)");
  });

  it("aComparisonThatComparedNoKeyExitsTwoNotAsNothingFlagged", () => {
    const failed = report({ k: { status: "error", title: "k", error: "bench exited 2" } });
    const none = compareRuns(["k"], [failed, failed], runs("k", [1, 1], ">="), IDS);
    expect(none.notCompared).toEqual(["k"]);
    expect(exitCodeOf(none)).toBe(2);
    expect(comparisonTable(none)).toContain("not compared (a side measured it in no run): k");
    // A key new in the current tree beside one both measured: compared what can be, exit 0, said so.
    const both = compareRuns(
      ["old", "new"],
      [report({ old: ok(1, ">=") }), report({ old: ok(1, ">=") })],
      [report({ old: ok(1, ">="), new: ok(2, ">=") }), report({ old: ok(1, ">="), new: ok(2, ">=") })],
      IDS,
    );
    expect(both.notCompared).toEqual(["new"]);
    expect(exitCodeOf(both)).toBe(0);
    expect(exitCodeOf(compareRuns(["a"], runs("a", [1, 1], ">="), runs("a", [0.5, 0.5], ">="), IDS))).toBe(1);
  });

  it("readsTheKeysABaseBenchRefusedAsUnknownFromItsStderr", () => {
    const stderr = "bench: --only: unknown figure key(s) ai_sdk_turn_ratio, new_key; known: a, b, c\nusage: …";
    expect(unknownKeysOf(stderr)).toEqual(["ai_sdk_turn_ratio", "new_key"]);
    expect(unknownKeysOf("bench: some figure crashed\n")).toEqual([]);
  });

  it("theTableShowsEveryRunTheRatioTheMeasuredRateAndTheFlag", () => {
    const base = [100, 110, 120].map((v) => report({ a: ok(v / 100, ">=", v) }));
    const current = [70, 80, 90].map((v) => report({ a: ok(v / 100, ">=", v) }));
    const table = comparisonTable(compareRuns(["a"], base, current, { ...IDS, currentDirty: true }));
    expect(table).toContain(
      "| `a` | higher | 1.1 (1 / 1.1 / 1.2) | 0.8 (0.7 / 0.8 / 0.9) | 0.727× | 110 appends/s | 80 appends/s | **WORSE by 27 %** |",
    );
    expect(table).toContain("bbbbbbb + uncommitted changes");
    expect(table).toContain("flagged: a");
  });

  it("refusesACommandLineWithoutABaseOrWithABadRunCount", () => {
    expect(() => parseCompareFlags([])).toThrow("--base REF is required");
    expect(() => parseCompareFlags(["--base", "x", "--runs", "0"])).toThrow("--runs must be a whole number");
    expect(() => parseCompareFlags(["--base", "x", "--only", ","])).toThrow("--only names no key");
    expect(() => parseCompareFlags(["--base", "x", "--bogus"])).toThrow();
    expect(parseCompareFlags(["--base", "9621a68", "--only", "a, b"])).toEqual({
      base: "9621a68",
      only: ["a", "b"],
      runs: 3,
      json: false,
      out: undefined,
      quick: false,
    });
  });
});
