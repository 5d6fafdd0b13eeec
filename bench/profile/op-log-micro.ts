// Per-turn CPU cost of the operation loggers (src/obs/op-log.ts) while their level is off: what one
// turn does through them — one opLogger, a runtime child, and the five debug lines a turn writes
// (turn admitted, actor placed, turn started, turn ended, turn completed) — under the host's default
// (no logger: a silent pino) and under `serve --log-level info`. Prints the median CPU ns per turn of
// each over `blocks` blocks; a turn itself costs milliseconds, so this is the whole of what logging
// adds to a turn at those levels.
// Run: npx tsx bench/profile/op-log-micro.ts [turnsPerBlock] [blocks]
import { createLog, type Log, opLogger, silentLog } from "../../src/obs/log.js";

const perBlock = Number(process.argv[2] ?? 1_000_000);
const blocks = Number(process.argv[3] ?? 5);

function block(parent: Log, n: number): number {
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const scope = { requestId: "0123456789abcdef01234567", session: "sess-0123456789abcdef", harness: "echo" };
    const log = opLogger(parent, { ...scope, executionId: "0123456789abcdef" }, 128);
    log.debug({ tier: "stateless", version: "1" }, "turn admitted");
    log.debug({ runtime: "spawned", worker: "pid:1", origin: "attached", duration_ms: 0.1 }, "actor placed");
    log.debug({ from_seq: i, inputs: 1, history: 0 }, "turn started");
    const runtime = log.child({ runtime: "spawned" });
    if (runtime.isLevelEnabled("debug")) runtime.debug({}, "never");
    if (log.isLevelEnabled("debug")) log.debug({ outcome: "completed" }, "turn ended");
    log.debug({ seq: i, records: 4 }, "turn completed");
  }
  const c = process.cpuUsage(c0);
  return ((c.user + c.system) * 1000) / n;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const parents: [string, Log][] = [
  ["no logger (silent)", silentLog],
  ["--log-level info", createLog({ level: "info", sink: { write() {} } })],
];
for (const [, p] of parents) block(p, perBlock / 5);
for (const [name, p] of parents) {
  const xs = Array.from({ length: blocks }, () => block(p, perBlock));
  process.stdout.write(`${name}: ${median(xs).toFixed(0)} ns CPU per turn (median of ${blocks} × ${perBlock})\n`);
}
