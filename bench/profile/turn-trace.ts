// Wall-clock spans of echo turns through serve + a spawned echo node (the turn_latency_ratio set-up):
// prototype methods on the Exec path are wrapped with timers, so the print shows where a turn's
// milliseconds go (median per turn, in ms). Observes only; changes no behaviour.
// Run: npx tsx bench/profile/turn-trace.ts [turns]
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Host } from "../../src/host/index.js";
import { openJournal } from "../../src/journal/index.js";
import { textMessage } from "../../src/model/text.js";
import { Placer } from "../../src/placement/placer.js";
import { ChainCheck } from "../../src/placement/chain-check.js";
import { HistoryCache } from "../../src/placement/history-cache.js";
import { RemoteHarness } from "../../src/node/remote-harness.js";
import { startServer } from "../../src/server/index.js";
import { createClient } from "../../src/wire/index.js";
import { median } from "../lib/stats.js";
import { newTally, timed } from "../lib/timed.js";
import { scratchDir } from "../lib/tmp.js";

const turns = Number(process.argv[2] ?? 200);
const spans = new Map<string, number[]>();
let current = new Map<string, number>();
const add = (name: string, ms: number) => current.set(name, (current.get(name) ?? 0) + ms);

function wrap(proto: object, names: string[], prefix: string): void {
  for (const name of names) {
    const p = proto as Record<string, unknown>;
    const fn = p[name] as (...a: unknown[]) => unknown;
    if (typeof fn !== "function") throw new Error(`${prefix}.${name} is not a method`);
    p[name] = function (this: unknown, ...args: unknown[]) {
      const t0 = performance.now();
      const out = fn.apply(this, args);
      if (out instanceof Promise) return out.finally(() => add(`${prefix}.${name}`, performance.now() - t0));
      add(`${prefix}.${name}`, performance.now() - t0);
      return out;
    };
  }
}
wrap(Placer.prototype, ["exec", "hold", "session", "resolveHarness", "incarnate", "turnFence", "checkpointAfterTurn"], "placer");
wrap(ChainCheck.prototype, ["ensure"], "chain");
wrap(HistoryCache.prototype, ["get"], "history");
wrap(RemoteHarness.prototype, ["run", "dispatch"], "remote");

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };
const dir = scratchDir("turn-trace");
const tally = newTally();
const journal = timed(await openJournal(dir.file("journal.db")), tally);
const host = await Host.open({ dataDir: dir.path, harnesses: [{ name: "necho", runtime: "spawned", target: "echo" }], defaultHarness: "necho", nodeIdleMs: 60_000 }, { journal });
const server = await startServer(host, { addr: `unix://${dir.file("s.sock")}`, registryAddr: "127.0.0.1:0", logger: SILENT });
const client = createClient(Sessions, server.addr);
try {
  let session = "";
  for (let i = 0; i < turns + 20; i++) {
    // A fresh session every 70 turns, as turn_latency_ratio measures (history length matters).
    if (i % 70 === 0) session = (await client.createSession({ session: { harness: "necho" } })).metadata?.uid ?? "";
    current = new Map();
    tally.reset();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let first = 0;
    let ended = false;
    for await (const u of client.exec({ session, inputs: [textMessage("user", `hello ${i}`)] })) {
      if (first === 0) first = performance.now() - t0;
      if (u.update.case === "record" && u.update.value.event?.kind === EventKind.EVENT_END) ended = true;
    }
    if (!ended) throw new Error("no END");
    add("client.total", performance.now() - t0);
    const cpu = process.cpuUsage(cpu0);
    add("host.cpu.user", cpu.user / 1000);
    add("host.cpu.system", cpu.system / 1000);
    add("client.firstFrame", first);
    for (const [m, v] of tally.byMethod) add(`journal.${m} x${v.calls}`, v.ms);
    if (i < 20) continue;
    for (const [k, v] of current) (spans.get(k) ?? spans.set(k, []).get(k)!).push(v);
  }
  for (const [k, v] of [...spans].sort(([a], [b]) => a.localeCompare(b))) console.log(`${k.padEnd(44)} ${median(v).toFixed(3)} ms  (n=${v.length})`);
} finally {
  client.close();
  await server.close(1000);
  await host.close();
  dir.dispose();
}
