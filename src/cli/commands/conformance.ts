// `harnesshost conformance`: runs the tier conformance suite against a harness and reports it.
// Invariants: flags are validated before anything starts; the exit status is 0 only when no check
// failed; machine-readable reports (json, junit) go to stdout or --out untouched by progress lines.
import { writeFile } from "node:fs/promises";
import { render, REPORTERS, runConformance, type ReporterName } from "../../conformance/index.js";
import { progressLine } from "../../conformance/reporters/pretty.js";
import { ConformanceOptions } from "../../conformance/types.js";
import { ExitCode } from "../exit-codes.js";
import { int, requireStr, str, UsageError, type Command } from "../command.js";

function reporterOf(value: string | undefined): ReporterName {
  const r = value ?? "pretty";
  if (!(REPORTERS as readonly string[]).includes(r))
    throw new UsageError(`--reporter must be one of ${REPORTERS.join(", ")}, got ${JSON.stringify(r)}`);
  return r as ReporterName;
}

export const conformanceCommand: Command = {
  name: "conformance",
  usage:
    "conformance --harness <name|module.js|address|vm:IMAGE> [--tier auto|stateless|memory] [--turns N] [--forks K] [--model echo|URL] [--model-name NAME] [--check ID]… [--reporter pretty|json|junit] [--out FILE]",
  options: {
    harness: { type: "string" },
    tier: { type: "string" },
    turns: { type: "string" },
    forks: { type: "string" },
    model: { type: "string" },
    "model-name": { type: "string" },
    check: { type: "string", multiple: true },
    reporter: { type: "string" },
    out: { type: "string" },
  },
  async run(ctx) {
    const reporter = reporterOf(str(ctx.values, "reporter"));
    const out = str(ctx.values, "out");
    const only = ctx.values["check"] as string[] | undefined;
    const modelName = str(ctx.values, "model-name");
    const parsed = ConformanceOptions.safeParse({
      harness: requireStr(ctx.values, "harness"),
      tier: str(ctx.values, "tier") ?? "auto",
      turns: int(ctx.values, "turns", 3),
      forks: int(ctx.values, "forks", 2),
      model: str(ctx.values, "model") ?? "echo",
      ...(modelName !== undefined ? { modelName } : {}),
      ...(only !== undefined ? { only } : {}),
    });
    if (!parsed.success)
      throw new UsageError(parsed.error.issues.map((i) => `--${i.path.join(".")}: ${i.message}`).join("; "));
    // Progress goes to stdout only when stdout carries the pretty report; otherwise to stderr.
    const live = reporter === "pretty" || out !== undefined ? ctx.out : ctx.err;
    const report = await runConformance(parsed.data, (event) => {
      const line = progressLine(event);
      if (line !== undefined) live(line);
    });
    const text = render(report, reporter);
    if (out !== undefined) {
      await writeFile(out, `${text}\n`);
      ctx.out(
        `${report.failed === 0 ? "OK" : "FAILED"}: ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped in ${(report.durationMs / 1000).toFixed(1)}s; ${reporter} report written to ${out}`,
      );
    } else ctx.out(text);
    return report.failed === 0 ? ExitCode.Ok : ExitCode.Failed;
  },
};
