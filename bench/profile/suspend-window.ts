// A CPU profile of only the suspend + resume windows of `cycles` cycles of a counter session on the
// spawned runtime (each cycle is followed by one unprofiled turn, as suspend_resume_p50_ms measures),
// aggregated per function and printed as ms per cycle — self time, then inclusive time. Unlike
// suspend-cycle.ts it leaves the turns out. Invariant: read-only measurement, nothing is kept.
// Run: npx tsx bench/profile/suspend-window.ts [cycles=60] [top=40]
import { Session } from "node:inspector/promises";
import { Host } from "../../src/host/index.js";
import { counterTurns } from "../lib/counter-turn.js";
import { scratchDir } from "../lib/tmp.js";
import { frameName, parentsOf, type Profile } from "./cpuprofile.js";

const cycles = Number(process.argv[2] ?? 60);
const top = Number(process.argv[3] ?? 40);
const warmup = 5;
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let totalMs = 0;

function add(profile: Profile): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = parentsOf(profile);
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    totalMs += ms;
    const leaf = frameName(byId.get(id)!);
    self.set(leaf, (self.get(leaf) ?? 0) + ms);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const name = frameName(byId.get(cur)!);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + ms);
    }
  });
}

const dir = scratchDir("profile-suspend-window");
const host = await Host.open({ dataDir: dir.path, nodeIdleMs: 60_000 });
const inspector = new Session();
inspector.connect();
await inspector.post("Profiler.enable");
await inspector.post("Profiler.setSamplingInterval", { interval: 50 });
const signal = new AbortController().signal;
try {
  const session = (await host.createSession({ harness: "counter" })).uid;
  const turn = counterTurns(host, session, signal);
  await turn();
  for (let i = 0; i < warmup + cycles; i++) {
    if (i >= warmup) await inspector.post("Profiler.start");
    await host.placer.suspend(session, signal);
    await host.placer.resume(session, signal);
    if (i >= warmup) add((await inspector.post("Profiler.stop")).profile as unknown as Profile);
    await turn();
  }
} finally {
  inspector.disconnect();
  await host.close();
  dir.dispose();
}
for (const [label, table] of [
  ["self", self],
  ["inclusive", inclusive],
] as const) {
  process.stdout.write(
    `--- ${label}, ms per cycle (sampled total ${(totalMs / cycles).toFixed(2)} ms per cycle, profiler overhead included)\n`,
  );
  for (const [name, ms] of [...table].sort((a, b) => b[1] - a[1]).slice(0, top))
    process.stdout.write(`${(ms / cycles).toFixed(3).padStart(8)}  ${name}\n`);
}
