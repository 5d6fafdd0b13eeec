// The report formats the CLI and library offer. Invariant: each reporter renders the whole report as
// one string; choosing one never changes what was checked.
import type { Report } from "../types.js";
import { jsonReport } from "./json.js";
import { junitReport } from "./junit.js";
import { prettyReport } from "./pretty.js";

export type ReporterName = "pretty" | "json" | "junit";
export const REPORTERS: readonly ReporterName[] = ["pretty", "json", "junit"];

export function render(report: Report, reporter: ReporterName): string {
  switch (reporter) {
    case "pretty":
      return prettyReport(report);
    case "json":
      return jsonReport(report);
    case "junit":
      return junitReport(report);
  }
}

export { jsonReport, junitReport, prettyReport };
export { progressLine } from "./pretty.js";
export { xmlEscape } from "./junit.js";
