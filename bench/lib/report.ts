// Turning figure results into the runner's JSON document and its human table. Invariant: every key a
// figure declares appears exactly once in the document, with status ok, unavailable or error.
import type { Detail, Figure, FigureResult, KeyReport, Reading, Target } from "./types.js";
import { round } from "./stats.js";

export function meets(value: number, target: Target): boolean {
  return target.op === ">=" ? value >= target.value : value <= target.value;
}

function okReport(title: string, reading: Reading): KeyReport {
  return { status: "ok", title, ...reading, ...(reading.target ? { pass: meets(reading.value, reading.target) } : {}) };
}

/** The JSON entries of one figure's outcome (its main key plus its extra keys). */
export function keyReports(
  figure: Figure,
  outcome: FigureResult | { status: "error"; error: string },
): Record<string, KeyReport> {
  const keys = [figure.key, ...(figure.extraKeys ?? [])];
  const out: Record<string, KeyReport> = {};
  switch (outcome.status) {
    case "ok": {
      const { status: _status, also, ...main } = outcome;
      out[figure.key] = okReport(figure.title, main);
      for (const key of figure.extraKeys ?? []) {
        const reading = also?.[key];
        if (reading === undefined)
          out[key] = { status: "unavailable", title: figure.title, reason: `figure ${figure.key} measured no ${key}` };
        else if ("unavailable" in reading)
          out[key] = { status: "unavailable", title: figure.title, reason: reading.unavailable };
        else out[key] = okReport(figure.title, reading);
      }
      return out;
    }
    case "unavailable":
      for (const key of keys) {
        out[key] = {
          status: "unavailable",
          title: figure.title,
          reason: outcome.reason,
          ...(outcome.details ? { details: outcome.details } : {}),
        };
      }
      return out;
    case "error":
      for (const key of keys) out[key] = { status: "error", title: figure.title, error: outcome.error };
      return out;
  }
}

function fmt(x: number | undefined, unit = ""): string {
  if (x === undefined || Number.isNaN(x)) return "";
  const n = round(x);
  return unit === "" || unit === "×" ? `${n}${unit}` : `${n} ${unit}`;
}

function detailText(details: Readonly<Record<string, Detail>> | undefined): string {
  if (!details) return "";
  return Object.entries(details)
    .map(([k, v]) => `${k}=${typeof v === "number" ? round(v) : String(v)}`)
    .join(" ");
}

/** One row per key: figure, value, baseline, ratio, target, verdict. */
export function table(reports: Readonly<Record<string, KeyReport>>): string {
  const header = ["figure", "value", "baseline", "ratio", "target", ""];
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const [key, r] of Object.entries(reports)) {
    switch (r.status) {
      case "ok": {
        const measured = r.measured
          ? `${fmt(r.measured.median, r.measured.unit)}${r.measured.p99 !== undefined ? ` (p99 ${fmt(r.measured.p99)})` : ""}`
          : fmt(r.value, r.unit);
        const baseline = r.baseline ? fmt(r.baseline.median, r.baseline.unit) : "";
        const ratio = r.ratio !== undefined ? fmt(r.ratio, "×") : "";
        const target = r.target ? `${r.target.op === ">=" ? "≥" : "≤"} ${r.target.value}` : "report";
        const verdict = r.pass === undefined ? "·" : r.pass ? "✓" : "✗";
        rows.push([key, measured, baseline, ratio, target, verdict]);
        const d = detailText(r.details);
        if (d) notes.push(`  ${key}: ${d}`);
        break;
      }
      case "unavailable":
        rows.push([key, "unavailable", "", "", "", "-"]);
        notes.push(`  ${key}: unavailable — ${r.reason}`);
        break;
      case "error":
        rows.push([key, "ERROR", "", "", "", "!"]);
        notes.push(`  ${key}: error — ${r.error}`);
        break;
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line), "", ...notes].join("\n");
}
