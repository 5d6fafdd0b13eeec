// The judging half of `npm run bench:compare` (bench/compare.ts runs the trees). Invariant: a key is
// flagged only from medians of the runs each side actually measured, in the key's own direction (its
// target's, else its name's), when the current median is worse than the base median by more than the
// threshold; a key a side could not measure is reported as such, never as a change.
import { parseArgs } from "node:util";
import { median, round } from "./stats.js";
import type { BenchReport, KeyReport } from "./types.js";

/** A figure worse than base by more than this fraction is flagged (0.10: 10 %). */
export const WORSE_THRESHOLD = 0.1;

export type Better = "higher" | "lower";

/** One side's readings of one key: the value of every run that measured it. */
export interface SideReadings {
  readonly values: number[];
  /** The figure's own measured quantity (e.g. appends/s behind a ratio), per run, when it reports one. */
  readonly measured: number[];
  readonly measuredUnit: string | undefined;
  /** Why runs did not measure the key (unavailable or error), one entry per such run. */
  readonly missing: string[];
}

export interface KeyComparison {
  readonly key: string;
  readonly unit: string;
  readonly better: Better;
  readonly base: SideReadings & { readonly median: number };
  readonly current: SideReadings & { readonly median: number };
  /** current median ÷ base median (NaN when a side measured nothing). */
  readonly ratio: number;
  /** How much worse current is than base, as a fraction of base (negative: better); NaN when unknown. */
  readonly worseBy: number;
  readonly flagged: boolean;
}

export interface Comparison {
  readonly baseRef: string;
  readonly baseCommit: string;
  readonly currentCommit: string;
  /** The current tree had uncommitted changes to tracked files when it was measured. */
  readonly currentDirty: boolean;
  readonly runsPerSide: number;
  readonly threshold: number;
  readonly keys: KeyComparison[];
  /** Keys flagged worse than base by more than the threshold. */
  readonly flagged: string[];
  /** Keys one side measured in no run, so nothing was compared. */
  readonly notCompared: string[];
}

/**
 * Which way is better for a key: its target's direction when it has one (">=": higher), else by name —
 * times, sizes, byte and error counts are better lower; everything else (rates, speed-ups) higher.
 */
export function betterOf(key: string, report: KeyReport | undefined): Better {
  if (report?.status === "ok" && report.target !== undefined) return report.target.op === ">=" ? "higher" : "lower";
  return /(_ms|_bytes|_blobs|_copies|_errors|_mb|latency_ratio|p99_ratio|p50_ratio)$/.test(key) ? "lower" : "higher";
}

function readingsOf(reports: readonly BenchReport[], key: string): SideReadings {
  const values: number[] = [];
  const measured: number[] = [];
  const missing: string[] = [];
  let measuredUnit: string | undefined;
  for (const r of reports) {
    const k = r.figures[key];
    if (k === undefined) missing.push("not a key of this tree's bench");
    else if (k.status === "ok") {
      values.push(k.value);
      if (k.measured !== undefined) {
        measured.push(k.measured.median);
        measuredUnit = k.measured.unit;
      }
    } else missing.push(k.status === "error" ? `error: ${k.error}` : `unavailable: ${k.reason}`);
  }
  return { values, measured, measuredUnit, missing };
}

/** How much worse `current` is than `base` as a fraction of base, in the key's direction. */
export function worseBy(base: number, current: number, better: Better): number {
  if (!Number.isFinite(base) || !Number.isFinite(current) || base === 0) return Number.NaN;
  return better === "higher" ? (base - current) / base : (current - base) / base;
}

/** Compares every key of `keys` between the base and current runs (each side's reports, in run order). */
export function compareRuns(
  keys: readonly string[],
  base: readonly BenchReport[],
  current: readonly BenchReport[],
  ids: { baseRef: string; baseCommit: string; currentCommit: string; currentDirty: boolean },
  threshold = WORSE_THRESHOLD,
): Comparison {
  const out: KeyComparison[] = keys.map((key) => {
    const sample = [...current, ...base].map((r) => r.figures[key]).find((k) => k?.status === "ok");
    const b = readingsOf(base, key);
    const c = readingsOf(current, key);
    const better = betterOf(key, sample);
    const bm = median(b.values);
    const cm = median(c.values);
    const worse = worseBy(bm, cm, better);
    return {
      key,
      unit: sample?.status === "ok" ? sample.unit : "",
      better,
      base: { ...b, median: bm },
      current: { ...c, median: cm },
      ratio: b.values.length > 0 && c.values.length > 0 ? cm / bm : Number.NaN,
      worseBy: worse,
      flagged: Number.isFinite(worse) && worse > threshold,
    };
  });
  return {
    ...ids,
    runsPerSide: Math.max(base.length, current.length),
    threshold,
    keys: out,
    flagged: out.filter((k) => k.flagged).map((k) => k.key),
    notCompared: out.filter((k) => k.base.values.length === 0 || k.current.values.length === 0).map((k) => k.key),
  };
}

/**
 * bench:compare's exit code: 1 when a figure is flagged; 2 when not one key was compared (every base or
 * every current run failed, or no key is known to both trees) — a comparison that compared nothing
 * must not pass as "no figure flagged"; else 0.
 */
export function exitCodeOf(c: Comparison): 0 | 1 | 2 {
  if (c.flagged.length > 0) return 1;
  return c.keys.length > 0 && c.notCompared.length === c.keys.length ? 2 : 0;
}

/**
 * The keys a bench run refused as unknown, read from its stderr (bench/run.ts: `--only: unknown figure
 * key(s) a, b; known: …`); empty when the run failed for another reason.
 */
export function unknownKeysOf(stderr: string): string[] {
  const m = /--only: unknown figure key\(s\) ([^;\n]+);/.exec(stderr);
  return m
    ? m[1]!
        .split(",")
        .map((k) => k.trim())
        .filter((k) => k !== "")
    : [];
}

function num(x: number): string {
  return Number.isFinite(x) ? String(round(x)) : "–";
}

function side(s: KeyComparison["base"]): string {
  if (s.values.length === 0) return `not measured (${s.missing[0] ?? "no runs"})`;
  return `${num(s.median)} (${s.values.map(num).join(" / ")})`;
}

function measuredCell(s: KeyComparison["base"]): string {
  return s.measured.length === 0 ? "" : `${num(median(s.measured))} ${s.measuredUnit ?? ""}`.trim();
}

function verdict(k: KeyComparison, threshold: number): string {
  if (!Number.isFinite(k.worseBy)) return "not compared";
  const pct = Math.round(Math.abs(k.worseBy) * 100);
  if (k.flagged) return `**WORSE by ${pct} %**`;
  return k.worseBy > 0 ? `${pct} % worse (within ${Math.round(threshold * 100)} %)` : `${pct} % better`;
}

/** The markdown table bench:compare prints. */
export function comparisonTable(c: Comparison): string {
  const short = (h: string) => h.slice(0, 7);
  const lines = [
    `base ${c.baseRef} (${short(c.baseCommit)}) vs current (${short(c.currentCommit)}${c.currentDirty ? " + uncommitted changes" : ""}): median of ${c.runsPerSide} alternating runs each; flagged when worse by more than ${Math.round(c.threshold * 100)} %`,
    "",
    "| key | better | base median (runs) | current median (runs) | current/base | base measured | current measured | |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const k of c.keys) {
    lines.push(
      `| \`${k.key}\` | ${k.better} | ${side(k.base)} | ${side(k.current)} | ${Number.isFinite(k.ratio) ? `${num(k.ratio)}×` : "–"} | ${measuredCell(k.base)} | ${measuredCell(k.current)} | ${verdict(k, c.threshold)} |`,
    );
  }
  lines.push("", c.flagged.length === 0 ? "no figure flagged" : `flagged: ${c.flagged.join(", ")}`);
  if (c.notCompared.length > 0) lines.push(`not compared (a side measured it in no run): ${c.notCompared.join(", ")}`);
  return lines.join("\n");
}

export interface CompareFlags {
  readonly base: string;
  readonly only: string[] | undefined;
  readonly runs: number;
  readonly json: boolean;
  readonly out: string | undefined;
  readonly quick: boolean;
}

/** The command line, checked: a bad one is an error naming what is wrong (exit 2). */
export function parseCompareFlags(argv: readonly string[]): CompareFlags {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      base: { type: "string" },
      only: { type: "string" },
      runs: { type: "string", default: "3" },
      json: { type: "boolean", default: false },
      out: { type: "string" },
      quick: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.base === undefined || values.base === "") throw new Error("--base REF is required");
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 15)
    throw new Error(`--runs must be a whole number 1-15, got ${values.runs}`);
  const only = values.only
    ?.split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (only !== undefined && only.length === 0) throw new Error("--only names no key");
  return { base: values.base, only, runs, json: values.json, out: values.out, quick: values.quick };
}
