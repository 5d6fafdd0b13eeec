// The JUnit XML reporter, for CI systems that render test results. Invariant: the output is
// well-formed XML (every attribute and text escaped, control characters dropped) with one testcase per
// check, a <failure> for each failed one and a <skipped> for each skipped one.
import type { Report } from "../types.js";

/** Escapes text for XML attributes and content; drops characters XML 1.0 cannot carry. */
export function xmlEscape(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

export function junitReport(report: Report): string {
  const suiteName = `harnesshost conformance: ${report.harness} (${report.tier})`;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="harnesshost conformance" tests="${report.checks.length}" failures="${report.failed}" skipped="${report.skipped}" errors="0" time="${seconds(report.durationMs)}">`,
    `  <testsuite name="${xmlEscape(suiteName)}" tests="${report.checks.length}" failures="${report.failed}" skipped="${report.skipped}" errors="0" time="${seconds(report.durationMs)}">`,
  ];
  for (const c of report.checks) {
    const open = `    <testcase classname="conformance.${c.tier}" name="${xmlEscape(c.id)}" time="${seconds(c.durationMs)}">`;
    switch (c.status) {
      case "pass":
        lines.push(open, `      <system-out>${xmlEscape(c.evidence)}</system-out>`, "    </testcase>");
        break;
      case "fail":
        lines.push(
          open,
          `      <failure message="${xmlEscape(c.evidence)}" type="conformance">${xmlEscape(`${c.title}\n${c.evidence}`)}</failure>`,
          "    </testcase>",
        );
        break;
      case "skip":
        lines.push(open, `      <skipped message="${xmlEscape(c.evidence)}"/>`, "    </testcase>");
        break;
    }
  }
  lines.push("  </testsuite>", "</testsuites>");
  return lines.join("\n");
}
