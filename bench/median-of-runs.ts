// Folds several `npm run bench -- --json --out FILE` reports into one markdown table: per key, the
// median value over the runs and each run's value, plus the verdict of the median against the target.
// Usage: npx tsx bench/median-of-runs.ts /tmp/bench-full-1.json /tmp/bench-full-2.json …
import { readFileSync } from "node:fs";
import { meets } from "./lib/report.js";
import { median, round } from "./lib/stats.js";
import type { BenchReport, KeyReport } from "./lib/types.js";

const files = process.argv.slice(2);
if (files.length === 0) throw new Error("usage: median-of-runs.ts REPORT.json…");
const reports = files.map((f) => JSON.parse(readFileSync(f, "utf8")) as BenchReport);
const keys = [...new Set(reports.flatMap((r) => Object.keys(r.figures)))];
const lines = ["| key | median | runs | target | |", "|---|---|---|---|---|"];
for (const key of keys) {
  const entries = reports.map((r) => r.figures[key]).filter((e): e is KeyReport => e !== undefined);
  const ok = entries.filter((e): e is Extract<KeyReport, { status: "ok" }> => e.status === "ok");
  if (ok.length === 0) {
    lines.push(`| \`${key}\` | ${entries[0]?.status ?? "missing"} | | | |`);
    continue;
  }
  const m = round(median(ok.map((e) => e.value)));
  const target = ok[0]?.target;
  const verdict = target ? (meets(m, target) ? "✓" : "✗") : "";
  const unit = ok[0]?.unit ?? "";
  lines.push(
    `| \`${key}\` | ${m} ${unit} | ${ok.map((e) => round(e.value)).join(" / ")} | ${target ? `${target.op === ">=" ? "≥" : "≤"} ${target.value}` : "report"} | ${verdict} |`,
  );
}
process.stdout.write(
  `${lines.join("\n")}\n\n${reports.map((r) => `${r.startedAt}: ${(r.durationMs / 1000).toFixed(0)} s`).join("; ")}\n`,
);
