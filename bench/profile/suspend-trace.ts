// Wall-clock spans of counter suspend + resume cycles (the suspend_resume_p50_ms set-up: spawned
// runtime, warm node, one turn between cycles, not timed): methods on the path are wrapped with timers
// and the print shows the median per cycle of each, in ms. Observes only; changes no behaviour.
// Run: npx tsx bench/profile/suspend-trace.ts [cycles]
import { Host } from "../../src/host/index.js";
import { openJournal } from "../../src/journal/index.js";
import { ActorsClient } from "../../src/node/actors-client.js";
import { ChainCheck } from "../../src/placement/chain-check.js";
import { Placer } from "../../src/placement/placer.js";
import { RecordCache } from "../../src/placement/record-cache.js";
import { SpawnedRuntime } from "../../src/runtime/spawned.js";
import { FsSnapshotStore } from "../../src/snapshot/store.js";
import { counterTurns } from "../lib/counter-turn.js";
import { median } from "../lib/stats.js";
import { newTally, timed } from "../lib/timed.js";
import { scratchDir } from "../lib/tmp.js";

const cycles = Number(process.argv[2] ?? 100);
const spans = new Map<string, number[]>();
let current = new Map<string, number>();
const add = (name: string, ms: number): void => {
  current.set(name, (current.get(name) ?? 0) + ms);
};

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
wrap(Placer.prototype, ["suspend", "resume", "hold", "session", "resolveHarness", "incarnate", "commitLifecycle", "headCheckpoint", "requireLiveActor"], "placer");
wrap(ChainCheck.prototype, ["ensure"], "chain");
wrap(RecordCache.prototype, ["all"], "records");
wrap(SpawnedRuntime.prototype, ["restore", "stop", "status", "create"], "spawned");
wrap(ActorsClient.prototype, ["restore", "drop"], "actors");
wrap(FsSnapshotStore.prototype, ["get", "put"], "blobs");

const dir = scratchDir("suspend-trace");
const tally = newTally();
const journal = timed(await openJournal(dir.file("journal.db")), tally);
const host = await Host.open({ dataDir: dir.path, nodeIdleMs: 60_000 }, { journal });
const signal = new AbortController().signal;
try {
  const session = (await host.createSession({ harness: "counter" })).uid;
  const turn = counterTurns(host, session, signal);
  await turn();
  for (let i = 0; i < cycles + 5; i++) {
    current = new Map();
    tally.reset();
    const t0 = performance.now();
    await host.placer.suspend(session, signal);
    const t1 = performance.now();
    await host.placer.resume(session, signal);
    const t2 = performance.now();
    add("cycle.total", t2 - t0);
    add("cycle.suspend", t1 - t0);
    add("cycle.resume", t2 - t1);
    for (const [m, v] of tally.byMethod) add(`journal.${m} x${v.calls}`, v.ms);
    if (i >= 5) for (const [k, v] of current) (spans.get(k) ?? spans.set(k, []).get(k)!).push(v);
    await turn();
  }
  for (const [k, v] of [...spans].sort(([a], [b]) => a.localeCompare(b))) console.log(`${k.padEnd(36)} ${median(v).toFixed(3)} ms  (n=${v.length})`);
} finally {
  await host.close();
  dir.dispose();
}
