// The benchmark runner (`npm run bench`, docs/performance.md). Invariant: it reports, it never judges — missed
// targets still exit 0; only a crashed figure (or a bad flag) exits non-zero. Every figure's keys
// appear in the output, measured or marked unavailable with the reason.
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { figures } from "./figures/index.js";
import { vmNodeRuntime, vmRuntime } from "./figures/vm.js";

/** The vm figures (not in the default run: they boot QEMU guests); `--vm` alone runs the Python one. */
const VM_FIGURES = [vmRuntime, vmNodeRuntime];
const VM_KEYS = [vmRuntime.key];
import { Unavailable } from "./lib/lazy.js";
import { keyReports, table } from "./lib/report.js";
import type { BenchReport, Figure, FigureResult, KeyReport, RunOptions } from "./lib/types.js";

const USAGE = `usage: npm run bench -- [--quick] [--vm] [--json] [--out FILE] [--only key1,key2]
  --quick   tiny sizes and few repetitions (a smoke run; numbers are meaningless)
  --vm      run the vm runtime figure (QEMU guests; minutes under TCG): alone, unless --only names more
            (--only vm_node_boot_ms: the same figures for the Node counter image)
  --json    print the JSON report to stdout instead of the table
  --out     also write the JSON report to FILE
  --only    run only the figures owning these keys`;

interface Flags {
  quick: boolean;
  vm: boolean;
  json: boolean;
  out: string | undefined;
  only: string[] | undefined;
}

function parseFlags(argv: readonly string[]): Flags {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: "boolean", default: false },
      vm: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      out: { type: "string" },
      only: { type: "string" },
      help: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const only = values.only
    ?.split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  return { quick: values.quick, vm: values.vm, json: values.json, out: values.out, only };
}

function selected(all: readonly Figure[], only: readonly string[] | undefined): Figure[] {
  if (!only) return [...all];
  const known = new Set(all.flatMap((f) => [f.key, ...(f.extraKeys ?? [])]));
  const unknown = only.filter((k) => !known.has(k));
  if (unknown.length > 0)
    throw new Error(`--only: unknown figure key(s) ${unknown.join(", ")}; known: ${[...known].join(", ")}`);
  return all.filter((f) => [f.key, ...(f.extraKeys ?? [])].some((k) => only.includes(k)));
}

async function runFigure(
  figure: Figure,
  opts: RunOptions,
  timeoutMs: number,
): Promise<FigureResult | { status: "error"; error: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`figure did not finish within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    return await Promise.race([figure.run(opts), timeout]);
  } catch (err) {
    if (err instanceof Unavailable) return { status: "unavailable", reason: err.message };
    const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
    return { status: "error", error: text.split("\n").slice(0, 4).join(" | ") };
  } finally {
    clearTimeout(timer);
  }
}

async function main(): Promise<number> {
  const flags = parseFlags(process.argv.slice(2));
  const opts: RunOptions = { quick: flags.quick, vm: flags.vm };
  const started = new Date();
  const t0 = performance.now();
  const reports: Record<string, KeyReport> = {};
  let crashed = false;
  const only = flags.only ?? (flags.vm ? VM_KEYS : undefined);
  for (const figure of selected(flags.vm ? [...figures, ...VM_FIGURES] : figures, only)) {
    process.stderr.write(`bench: ${figure.key} …`);
    const f0 = performance.now();
    const outcome = await runFigure(
      figure,
      opts,
      VM_FIGURES.includes(figure)
        ? 1_800_000
        : flags.quick
          ? (figure.timeoutMs?.quick ?? 60_000)
          : (figure.timeoutMs?.full ?? 180_000),
    );
    if (outcome.status === "error") crashed = true;
    process.stderr.write(` ${outcome.status} (${((performance.now() - f0) / 1000).toFixed(1)} s)\n`);
    Object.assign(reports, keyReports(figure, outcome));
  }
  const report: BenchReport = {
    version: 1,
    quick: flags.quick,
    startedAt: started.toISOString(),
    durationMs: Math.round(performance.now() - t0),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: cpus().length,
    figures: reports,
  };
  const json = `${JSON.stringify(report, null, 2)}\n`;
  if (flags.out) writeFileSync(flags.out, json);
  if (flags.json) process.stdout.write(json);
  else
    process.stdout.write(
      `${table(reports)}\n\n${flags.quick ? "quick run: " : ""}${(report.durationMs / 1000).toFixed(1)} s on ${report.cpus} cpus, ${report.node}\n`,
    );
  return crashed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    process.exit(2);
  },
);
