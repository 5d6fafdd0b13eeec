// python_echo_turn_ratio: one echo turn through a harness node written with the Python SDK
// (python/examples/echo.py, grpc.aio on Debian's grpcio) over the same turn through the TypeScript SDK's
// node (`harnesshost node --harness echo --no-actors`, the built-in echo). Both nodes are separate
// processes behind unix sockets, reached by one in-process Host on the remote runtime; both serve no
// Actors, so the host sends both the same frames (a full Start.history). Measured turns alternate
// between the two sessions after a warm-up. Reported, no target (docs/performance.md). Invariant: every
// measured turn must answer its own echo, or the figure crashes instead of reporting a number.
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { textMessage } from "../../src/controller/events.js";
import { Host } from "../../src/host/index.js";
import { promptText } from "../lib/echo-turns.js";
import { Unavailable } from "../lib/lazy.js";
import { median, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

const ROOT = resolve(import.meta.dirname, "../..");
const PYTHON = "/usr/bin/python3";
const SRC_BIN = resolve(ROOT, "scripts/harnesshost-src.mjs");

/** Starts a node process; resolves with the address its first stdout line names (`ready ADDR` or JSON). */
function startNode(
  cmd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; address: string }> {
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  return new Promise((res, rej) => {
    child.once("error", rej);
    child.once("exit", (code) =>
      rej(new Unavailable(`${args.join(" ")} exited (${String(code)}): ${stderr.slice(-500)}`)),
    );
    createInterface({ input: child.stdout! }).once("line", (line) => {
      const ready = /^ready (\S+)$/.exec(line);
      const address = ready?.[1] ?? (JSON.parse(line) as { address?: string }).address;
      if (address === undefined) rej(new Error(`no address in ${JSON.stringify(line)}`));
      else res({ child, address });
    });
  });
}

export const pythonEcho: Figure = {
  key: "python_echo_turn_ratio",
  title: "Python SDK node echo turn vs the TypeScript node's echo turn",
  async run(opts: RunOptions): Promise<FigureResult> {
    const warmup = opts.quick ? 3 : 20;
    const measured = opts.quick ? 10 : 200;
    const dir = scratchDir("python-echo");
    const children: ChildProcess[] = [];
    const signal = new AbortController().signal;
    try {
      const py = await startNode(
        PYTHON,
        ["-B", resolve(ROOT, "python/examples/echo.py"), "--listen", `unix://${dir.file("py.sock")}`],
        { ...process.env, PYTHONPATH: resolve(ROOT, "python") },
      );
      children.push(py.child);
      const ts = await startNode(
        process.execPath,
        [SRC_BIN, "node", "--harness", "echo", "--no-actors", "--listen", `unix://${dir.file("ts.sock")}`],
        process.env,
      );
      children.push(ts.child);
      const host = await Host.open({
        dataDir: dir.path,
        harnesses: [
          { name: "pyecho", runtime: "remote", target: py.address },
          { name: "tsecho", runtime: "remote", target: ts.address },
        ],
      });
      try {
        const series = [
          { name: "pyecho", uid: (await host.createSession({ harness: "pyecho" })).uid, ms: [] as number[] },
          { name: "tsecho", uid: (await host.createSession({ harness: "tsecho" })).uid, ms: [] as number[] },
        ];
        for (let i = 0; i < warmup + measured; i++) {
          for (const s of i % 2 === 0 ? series : [...series].reverse()) {
            const text = promptText(i);
            const t0 = performance.now();
            const result = await host.placer.exec({ session: s.uid, inputs: [textMessage("user", text)], signal });
            const ms = performance.now() - t0;
            if (result.outputs.at(-1) !== `echo:${text}`)
              throw new Error(`${s.name} turn ${i} answered ${JSON.stringify(result.outputs.at(-1))}`);
            if (i >= warmup) s.ms.push(ms);
          }
        }
        const [pyS, tsS] = series as [(typeof series)[0], (typeof series)[0]];
        const ratio = median(pyS.ms) / median(tsS.ms);
        return {
          status: "ok",
          value: round(ratio),
          unit: "×",
          measured: sampleOf(pyS.ms.map(round), "ms", true),
          baseline: {
            ...sampleOf(tsS.ms.map(round), "ms", true),
            what: "the TypeScript node's echo turn (--no-actors)",
          },
          ratio: round(ratio),
          details: { warmupTurns: warmup, measuredTurnsEach: measured, transport: "unix", runtime: "remote" },
        };
      } finally {
        await host.close();
      }
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGTERM");
      dir.dispose();
    }
  },
};
