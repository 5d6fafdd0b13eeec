// CLI start-up and one remote turn, end to end, as a user runs them (docs/performance.md, "CLI").
// Invariant: it reports, it never judges. Each command is a fresh process measured by /usr/bin/time
// (wall, user+sys CPU, peak RSS); the table shows medians over --runs and the ratio to `node -e 0`.
// Usage: npm run build && npx tsx bench/cli-start.ts [--runs N] [--bin PATH]
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { runs: { type: "string", default: "15" }, bin: { type: "string" } } });
const RUNS = Number(values.runs);
const BIN = resolve(values.bin ?? join(import.meta.dirname, "../bin/harnesshost.js"));

interface Sample {
  wall: number;
  cpu: number;
  rssMiB: number;
}

function measure(args: readonly string[]): Sample {
  const r = spawnSync("/usr/bin/time", ["-f", "%e %U %S %M", process.execPath, ...args], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  const last = r.stderr.trim().split("\n").at(-1) ?? "";
  const [wall, user, sys, rss] = last.split(" ").map(Number);
  return { wall: wall ?? NaN, cpu: (user ?? NaN) + (sys ?? NaN), rssMiB: (rss ?? NaN) / 1024 };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

/** Medians over RUNS; NaN (printed "n/a") when the command fails, e.g. --version before it existed. */
function row(args: readonly string[]): Sample {
  try {
    measure(args); // warm the page cache
  } catch {
    return { wall: NaN, cpu: NaN, rssMiB: NaN };
  }
  const samples = Array.from({ length: RUNS }, () => measure(args));
  return {
    wall: median(samples.map((s) => s.wall)),
    cpu: median(samples.map((s) => s.cpu)),
    rssMiB: Math.max(...samples.map((s) => s.rssMiB)),
  };
}

async function startServe(dir: string): Promise<{ addr: string; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [BIN, "serve", "--data", dir, "--addr", "127.0.0.1:0", "--registry-addr", "127.0.0.1:0", "--http-addr", "off"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const addr = await new Promise<string>((res, rej) => {
    createInterface({ input: child.stderr }).on("line", (l) => {
      const m = /listening addr=(\S+)/.exec(l);
      if (m?.[1]) res(m[1]);
    });
    void exited.then(() => rej(new Error("serve exited before listening")));
  });
  return {
    addr,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), "hh-bench-cli-"));
const serve = await startServe(dir);
try {
  const rows: [string, Sample][] = [
    ["node -e 0", row(["-e", "0"])],
    ["harnesshost --help", row([BIN, "--help"])],
    ["harnesshost --version", row([BIN, "--version"])],
    ["exec --server (one echo turn)", row([BIN, "exec", "--server", serve.addr, "--harness", "echo", "--input", "hi"])],
  ];
  const base = rows[0]?.[1].wall ?? NaN;
  console.log(`bin ${BIN}, ${RUNS} runs each (median wall and CPU, peak RSS)`);
  console.log("command                          wall s   ×node   CPU s   peak MiB");
  for (const [name, s] of rows) {
    const f = (x: number, digits: number, width: number): string =>
      (Number.isNaN(x) ? "n/a" : x.toFixed(digits)).padStart(width);
    console.log(
      `${name.padEnd(32)} ${f(s.wall, 2, 6)} ${f(s.wall / base, 1, 7)} ${f(s.cpu, 2, 7)} ${f(s.rssMiB, 0, 10)}`,
    );
  }
} finally {
  await serve.stop();
  rmSync(dir, { recursive: true, force: true });
}
