// CPU of a `harnesshost serve` restart, bins alternating: each start (the bin's `serve` on a data
// directory its first, untimed start made; listeners other than gRPC off) is timed from spawn to its
// listening line and to its first Health SERVING, and a preload reports the process's own CPU
// (`process.cpuUsage()`, user + system, every thread) at the listening line and right after that Health
// answer — steadier than wall time on a shared machine. Invariant: it reports, it never judges; every
// serve it starts is stopped, every directory it made removed.
// Usage: npx tsx bench/profile/serve-start-cpu.ts RUNS BIN [BIN…]   (NODEFLAGS="--flag …" adds node flags)
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { healthServing, stopServe as stop } from "../lib/serve-ready.js";
import { median } from "../lib/stats.js";

const [runsArg, ...binArgs] = process.argv.slice(2);
if (!runsArg || binArgs.length === 0) throw new Error("usage: serve-start-cpu.ts RUNS BIN [BIN…]");
const bins = binArgs.map((b) => resolve(b));
const scratch = mkdtempSync(join(tmpdir(), "hh-serve-cpu-"));
const PRELOAD = join(scratch, "cpu-preload.mjs");
writeFileSync(
  PRELOAD,
  `const write = process.stderr.write.bind(process.stderr);
const cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
let seen = false;
process.stderr.write = (chunk, ...rest) => {
  if (!seen && String(chunk).includes("harnesshost listening")) { seen = true; write("CPU_LISTEN " + cpu() + "\\n"); }
  return write(chunk, ...rest);
};
process.on("SIGUSR2", () => write("CPU_HEALTH " + cpu() + "\\n"));
`,
);

/** gRPC on a free loopback port; the registry and HTTP listeners off (as the serve_ready_ms figure). */
const LISTENERS = ["--addr", "127.0.0.1:0", "--registry-addr", "off", "--http-addr", "off"];

interface Start {
  listenMs: number;
  healthMs: number;
  cpuListenMs: number;
  cpuHealthMs: number;
}

async function start(bin: string, dir: string): Promise<Start> {
  const flags = (process.env["NODEFLAGS"] ?? "").split(" ").filter(Boolean);
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [...["--import", PRELOAD, ...flags, bin, "serve", "--data", dir], ...LISTENERS],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  try {
    let cpuListenMs = Number.NaN;
    let onHealthCpu: (ms: number) => void = () => {};
    const addr = await new Promise<string>((res, rej) => {
      for (const input of [child.stdout, child.stderr])
        createInterface({ input }).on("line", (l) => {
          const listen = /^CPU_LISTEN (\S+)/.exec(l);
          if (listen) cpuListenMs = Number(listen[1]);
          const health = /^CPU_HEALTH (\S+)/.exec(l);
          if (health) onHealthCpu(Number(health[1]));
          const m = /listening addr=(\S+)/.exec(l);
          if (m?.[1]) res(m[1]);
        });
      child.once("exit", (code) => rej(new Error(`serve exited ${code} before listening`)));
    });
    const listenMs = performance.now() - t0;
    await healthServing(addr);
    const healthMs = performance.now() - t0;
    const cpuHealthMs = await new Promise<number>((res) => {
      onHealthCpu = res;
      child.kill("SIGUSR2");
    });
    return { listenMs, healthMs, cpuListenMs, cpuHealthMs };
  } finally {
    await stop(child);
  }
}

try {
  const dirs = bins.map((_, i) => join(scratch, `data-${i}`));
  for (const [i, bin] of bins.entries()) await start(bin, dirs[i]!); // makes the data directory; warms caches
  const results: Start[][] = bins.map(() => []);
  for (let r = 0; r < Number(runsArg); r++)
    for (const [i, bin] of bins.entries()) results[i]!.push(await start(bin, dirs[i]!));
  const f = (xs: number[]) => median(xs).toFixed(0);
  for (const [i, bin] of bins.entries()) {
    const rs = results[i]!;
    console.log(
      `${bin}: wall listening ${f(rs.map((r) => r.listenMs))} health ${f(rs.map((r) => r.healthMs))} ms | ` +
        `CPU listening ${f(rs.map((r) => r.cpuListenMs))} health ${f(rs.map((r) => r.cpuHealthMs))} ms ` +
        `(health: ${rs.map((r) => r.cpuHealthMs.toFixed(0)).join(" / ")})`,
    );
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
