// A focused workload for the CPU profiler: `cycles` suspend + resume cycles (each followed by one
// turn) of a counter session on the spawned runtime with a warm node, as suspend_resume_p50_ms
// measures them. Run: node --import tsx --cpu-prof --cpu-prof-dir /tmp/prof bench/profile/suspend-cycle.ts [cycles]
// then: npx tsx bench/profile/summarize.ts /tmp/prof/<file>.cpuprofile
import { Host } from "../../src/host/index.js";
import { counterTurns } from "../lib/counter-turn.js";
import { scratchDir } from "../lib/tmp.js";

const cycles = Number(process.argv[2] ?? 200);
const dir = scratchDir("profile-suspend");
const host = await Host.open({ dataDir: dir.path, nodeIdleMs: 60_000 });
const signal = new AbortController().signal;
try {
  const session = (await host.createSession({ harness: "counter" })).uid;
  const turn = counterTurns(host, session, signal);
  await turn();
  const t0 = performance.now();
  for (let i = 0; i < cycles; i++) {
    await host.placer.suspend(session, signal);
    await host.placer.resume(session, signal);
    await turn();
  }
  process.stdout.write(`${cycles} cycles (+1 turn each) in ${(performance.now() - t0).toFixed(0)} ms\n`);
} finally {
  await host.close();
  dir.dispose();
}
