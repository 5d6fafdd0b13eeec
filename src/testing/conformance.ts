// The conformance suite callable from any test framework (docs/conformance.md). Invariant: these run
// the very same checks as `harnesshost conformance`; `assertConformance` resolves only when no check
// failed and otherwise throws one Error listing every failed check with its evidence.
import { runConformance } from "../conformance/runner.js";
import type { ConformanceOptionsInput, Report } from "../conformance/types.js";

/** Runs the suite against a harness (a module path, built-in name or node address); the report. */
export function conformance(options: ConformanceOptionsInput): Promise<Report> {
  return runConformance(options);
}

/** Runs the suite and throws when any check failed; resolves to the report when none did. */
export async function assertConformance(options: ConformanceOptionsInput): Promise<Report> {
  const report = await conformance(options);
  const failed = report.checks.filter((c) => c.status === "fail");
  if (failed.length > 0)
    throw new Error(
      `conformance of ${report.harness} (${report.tier}): ${failed.length} of ${report.checks.length} checks failed\n${failed
        .map((c) => `  ${c.id}: ${c.evidence}`)
        .join("\n")}`,
    );
  return report;
}
