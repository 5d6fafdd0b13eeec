// The human reporter: one live line per check while the suite runs, then a table (check, tier,
// result, evidence, time) and the suite's wall time. Invariant: every check appears once in the
// table, and the summary line's counts equal the table's.
import type { CheckResult, ProgressEvent, Report } from "../types.js";

const MARK: Record<CheckResult["status"], string> = { pass: "PASS", fail: "FAIL", skip: "SKIP" };
const secs = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** The live line for a progress event (undefined when the event prints nothing). */
export function progressLine(event: ProgressEvent): string | undefined {
  switch (event.type) {
    case "start":
      return `harnesshost conformance: ${event.harness} — ${event.tier} tier, ${event.checks.length} checks`;
    case "check-start":
      return undefined;
    case "check-end": {
      const r = event.result;
      const evidence = r.status === "pass" ? "" : ` — ${r.evidence}`;
      return `[${event.index + 1}/${event.total}] ${MARK[r.status]} ${r.id} (${secs(r.durationMs)})${evidence}`;
    }
  }
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line.length > 0 && line.length + 1 + word.length > width) {
      out.push(line);
      line = word;
    } else line = line.length > 0 ? `${line} ${word}` : word;
  }
  if (line.length > 0) out.push(line);
  return out.length > 0 ? out : [""];
}

export function prettyReport(report: Report, width = 100): string {
  const idW = Math.max(5, ...report.checks.map((c) => c.id.length));
  const tierW = 11;
  const resW = 6;
  const timeW = 7;
  const evW = Math.max(30, width - idW - tierW - resW - timeW - 8);
  const row = (a: string, b: string, c: string, d: string, e: string) =>
    `${a.padEnd(idW)}  ${b.padEnd(tierW)}${c.padEnd(resW)}${e.padStart(timeW)}  ${d}`;
  const lines = [
    row("check", "tier", "result", "evidence", "time"),
    "-".repeat(Math.min(width, idW + tierW + resW + timeW + evW + 4)),
  ];
  for (const c of report.checks) {
    const [first, ...rest] = wrap(c.evidence, evW);
    lines.push(row(c.id, c.tier, MARK[c.status], first ?? "", secs(c.durationMs)));
    for (const more of rest) lines.push(row("", "", "", more, ""));
  }
  lines.push(
    "",
    `${report.failed === 0 ? "OK" : "FAILED"}: ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped — ${report.harness} (${report.tier}${report.descriptorId ? `, descriptor ${report.descriptorId}` : ""}) in ${secs(report.durationMs)}`,
  );
  return lines.join("\n");
}
