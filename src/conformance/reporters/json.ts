// The JSON reporter. Invariant: the document carries exactly the fields CI tooling reads (harness,
// tier, counts, one entry per check with id, tier, status and evidence) plus timings.
import type { Report } from "../types.js";

export function jsonReport(report: Report): string {
  return JSON.stringify(
    {
      harness: report.harness,
      tier: report.tier,
      descriptor: report.descriptorId,
      passed: report.passed,
      failed: report.failed,
      skipped: report.skipped,
      duration_ms: report.durationMs,
      checks: report.checks.map((c) => ({
        id: c.id,
        tier: c.tier,
        status: c.status,
        evidence: c.evidence,
        duration_ms: c.durationMs,
      })),
    },
    null,
    2,
  );
}
