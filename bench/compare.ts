// `npm run bench:compare -- --base REF [--only KEYS]` (docs/performance.md, "Comparing against a base").
// Invariant: base and current run the same bench keys in one sitting, alternating which goes first
// (base, current, then current, base, …), each from its own tree — the base from a temporary git
// worktree at REF that is removed afterwards, whatever happens — and the verdict comes from
// bench/lib/compare.ts on the medians of the runs; a key one tree's bench does not know is dropped
// from that tree's runs (said on stderr) and reported as not measured there. Exit 0: nothing flagged;
// 1: a figure is worse than base by more than 10 %; 2: the comparison could not run or compared no key.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type CompareFlags,
  type Comparison,
  compareRuns,
  comparisonTable,
  exitCodeOf,
  parseCompareFlags,
  unknownKeysOf,
} from "./lib/compare.js";
import type { BenchReport } from "./lib/types.js";

const USAGE = `usage: npm run bench:compare -- --base REF [--only key1,key2] [--runs N] [--json] [--out FILE] [--quick]
  --base    the git commit (or tag, branch) to compare the working tree against
  --only    the bench keys to compare (default: every figure of the default run; that takes long)
  --runs    runs per side, alternating (default 3; the medians are compared)
  --json    print the comparison as JSON instead of the table
  --out     also write the JSON comparison to FILE
  --quick   pass --quick to the bench (a smoke run: numbers are meaningless)`;

function git(cwd: string, args: readonly string[]): string {
  const r = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout.trim();
}

/**
 * The base tree: a detached worktree at `commit` under a temporary directory. Its node_modules is a link
 * to the current tree's when both package-lock.json files are the same (no install at all), else `npm ci`
 * installs the base's own. Its dist/ is then compiled (`tsc -p tsconfig.build.json`, what the tests'
 * set-up runs): the bench imports the package by name in places (docs/examples, `harnesshost/ai-sdk`),
 * which resolves to dist/, and a fresh worktree has none.
 */
function makeBaseTree(repo: string, commit: string): { dir: string; remove(): void } {
  const parent = mkdtempSync(join(tmpdir(), "harnesshost-bench-base-"));
  const dir = join(parent, "tree");
  const remove = () => {
    spawnSync("git", ["worktree", "remove", "--force", dir], { cwd: repo });
    rmSync(parent, { recursive: true, force: true });
    spawnSync("git", ["worktree", "prune"], { cwd: repo });
  };
  try {
    git(repo, ["worktree", "add", "--detach", dir, commit]);
    const baseLock = join(dir, "package-lock.json");
    const ourLock = join(repo, "package-lock.json");
    const sameLock =
      existsSync(baseLock) && existsSync(ourLock) && readFileSync(baseLock, "utf8") === readFileSync(ourLock, "utf8");
    if (sameLock && existsSync(join(repo, "node_modules"))) {
      symlinkSync(realpathSync(join(repo, "node_modules")), join(dir, "node_modules"), "dir");
    } else {
      process.stderr.write(`bench:compare: ${commit.slice(0, 7)} has another package-lock.json; npm ci there …\n`);
      const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], {
        cwd: dir,
        stdio: ["ignore", "ignore", "inherit"],
      });
      if (r.status !== 0) throw new Error(`npm ci in the base tree exited ${r.status}`);
    }
    buildIfMissing(dir, commit.slice(0, 7));
    return { dir, remove };
  } catch (err) {
    remove();
    throw err;
  }
}

/**
 * `npm run build` in `tree` when it has no dist/: figures import the docs' examples, which import the
 * package's own entry points (dist/), so a fresh tree cannot even load the bench without it.
 */
function buildIfMissing(tree: string, label: string): void {
  if (existsSync(join(tree, "dist"))) return;
  process.stderr.write(`bench:compare: ${label} has no dist/; npm run build there …\n`);
  const r = spawnSync("npm", ["run", "build"], { cwd: tree, stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0) throw new Error(`npm run build in ${tree} exited ${r.status}`);
}

/** A report of `figures` with no run behind it. */
function reportOf(quick: boolean, figures: BenchReport["figures"]): BenchReport {
  return { version: 1, quick, startedAt: "", durationMs: 0, node: "", platform: "", cpus: 0, figures };
}

/** One `bench/run.ts --out` run in `tree` over `only` (undefined: every key): its report, or its stderr. */
function runBench(
  tree: string,
  label: string,
  quick: boolean,
  only: readonly string[] | undefined,
  out: string,
): Promise<{ report: BenchReport } | { code: number | null; stderr: string }> {
  const args = ["bench/run.ts", "--out", out, ...(quick ? ["--quick"] : [])];
  if (only !== undefined) args.push("--only", only.join(","));
  return new Promise((resolve) => {
    const child = spawn(join(tree, "node_modules", ".bin", "tsx"), args, {
      cwd: tree,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-200_000);
      for (const line of chunk.split("\n")) if (line !== "") process.stderr.write(`[${label}] ${line}\n`);
    });
    child.on("close", (code) => {
      if (existsSync(out)) resolve({ report: JSON.parse(readFileSync(out, "utf8")) as BenchReport });
      else resolve({ code, stderr });
    });
  });
}

/**
 * The keys each tree is asked for. A base whose bench refuses a key as unknown (a key newer than the
 * base) has it dropped, said on stderr, and is run again without it: that key then reads as "not a key
 * of this tree's bench" on that side instead of failing every other key of the run with it. A key the
 * current tree does not know is a mistyped command: the comparison stops (exit 2).
 */
class TreeRuns {
  private only: string[] | undefined;
  constructor(
    private readonly tree: string,
    private readonly which: string,
    private readonly flags: CompareFlags,
  ) {
    this.only = flags.only === undefined ? undefined : [...flags.only];
  }

  async run(label: string, out: string): Promise<BenchReport> {
    for (;;) {
      if (this.only !== undefined && this.only.length === 0) return reportOf(this.flags.quick, {});
      const r = await runBench(this.tree, label, this.flags.quick, this.only, out);
      if ("report" in r) return r.report;
      const unknown = this.only === undefined ? [] : unknownKeysOf(r.stderr).filter((k) => this.only!.includes(k));
      if (unknown.length > 0 && this.which === "current")
        throw new Error(`--only names ${unknown.join(", ")}, which this tree's bench does not know`);
      if (unknown.length > 0) {
        process.stderr.write(
          `bench:compare: the ${this.which} tree's bench does not know ${unknown.join(", ")}: dropped from its runs (not measured on that side)\n`,
        );
        this.only = this.only!.filter((k) => !unknown.includes(k));
        continue;
      }
      const error = `bench exited ${r.code}: ${r.stderr.trim().split("\n").slice(-2).join(" | ")}`;
      return reportOf(
        this.flags.quick,
        Object.fromEntries((this.only ?? []).map((k) => [k, { status: "error" as const, title: k, error }])),
      );
    }
  }
}

async function main(): Promise<number> {
  const flags = parseCompareFlags(process.argv.slice(2));
  const repo = git(process.cwd(), ["rev-parse", "--show-toplevel"]);
  const baseCommit = git(repo, ["rev-parse", "--verify", `${flags.base}^{commit}`]);
  const head = git(repo, ["rev-parse", "HEAD"]);
  const currentDirty = git(repo, ["status", "--porcelain", "--untracked-files=no"]) !== "";
  const scratch = mkdtempSync(join(tmpdir(), "harnesshost-bench-compare-"));
  buildIfMissing(repo, "the working tree");
  const base = makeBaseTree(repo, baseCommit);
  const onSignal = () => {
    base.remove();
    rmSync(scratch, { recursive: true, force: true });
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  let comparison: Comparison;
  try {
    const baseReports: BenchReport[] = [];
    const currentReports: BenchReport[] = [];
    const trees = { base: new TreeRuns(base.dir, "base", flags), current: new TreeRuns(repo, "current", flags) };
    for (let run = 0; run < flags.runs; run++) {
      const order = run % 2 === 0 ? (["base", "current"] as const) : (["current", "base"] as const);
      for (const which of order) {
        const label = `${which} ${run + 1}/${flags.runs}`;
        const report = await trees[which].run(label, join(scratch, `${which}-${run}.json`));
        (which === "base" ? baseReports : currentReports).push(report);
      }
    }
    const keys = flags.only ?? [...new Set([...currentReports, ...baseReports].flatMap((r) => Object.keys(r.figures)))];
    comparison = compareRuns(keys, baseReports, currentReports, {
      baseRef: flags.base,
      baseCommit,
      currentCommit: head,
      currentDirty,
    });
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    base.remove();
    rmSync(scratch, { recursive: true, force: true });
  }
  const json = `${JSON.stringify(comparison, null, 2)}\n`;
  if (flags.out !== undefined) writeFileSync(flags.out, json);
  process.stdout.write(flags.json ? json : `${comparisonTable(comparison)}\n`);
  return exitCodeOf(comparison);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:compare: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    process.exit(2);
  },
);
