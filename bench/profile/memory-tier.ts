// Profiles the memory tier at size: a spawned big-state actor filled to SIZE bytes, then suspend/resume
// cycles with the journal and blob store timed (bench/lib/timed.ts). Usage:
//   npx tsx bench/profile/memory-tier.ts [bytes=1048576] [cycles=20]
import { fileURLToPath } from "node:url";
import { Host } from "../../src/host/index.js";
import { openJournal } from "../../src/journal/index.js";
import { textMessage } from "../../src/model/text.js";
import { FsSnapshotStore } from "../../src/snapshot/store.js";
import { median } from "../lib/stats.js";
import { newTally, timed } from "../lib/timed.js";
import { scratchDir } from "../lib/tmp.js";

const bytes = Number(process.argv[2] ?? 1 << 20);
const cycles = Number(process.argv[3] ?? 20);
const harness = fileURLToPath(new URL("../../harnesses/fixtures/big-state.ts", import.meta.url));
const dir = scratchDir("memtier");
const jt = newTally();
const st = newTally();
const journal = timed(await openJournal(dir.file("journal.db")), jt);
const snapshots = timed(new FsSnapshotStore(dir.file("snapshots")), st);
const host = await Host.open(
  {
    dataDir: dir.path,
    nodeIdleMs: 60_000,
    limits: { snapshotBytes: 1024 * 1024 * 1024 },
    harnesses: [{ name: "big", runtime: "spawned", target: harness, checkpointPolicy: "on-suspend" }],
  },
  { journal, snapshots },
);
const signal = new AbortController().signal;
try {
  const session = (await host.createSession({ harness: "big" })).uid;
  await host.placer.exec({ session, inputs: [textMessage("user", `fill ${bytes}`)], signal });
  const sus: number[] = [];
  const res: number[] = [];
  for (let i = 0; i < cycles; i++) {
    jt.reset();
    st.reset();
    const t0 = performance.now();
    await host.placer.suspend(session, signal);
    const t1 = performance.now();
    const sj = jt.ms();
    const ss = st.ms();
    jt.reset();
    st.reset();
    await host.placer.resume(session, signal);
    const t2 = performance.now();
    sus.push(t1 - t0);
    res.push(t2 - t1);
    console.log(
      `suspend ${(t1 - t0).toFixed(1)} ms (journal ${sj.toFixed(1)} store ${ss.toFixed(1)})  resume ${(t2 - t1).toFixed(1)} ms (journal ${jt.ms().toFixed(1)} store ${st.ms().toFixed(1)})`,
    );
    // a turn changes the state (count), so the next suspend stores a new blob
    await host.placer.exec({ session, inputs: [textMessage("user", "tick")], signal });
  }
  console.log(`p50 suspend ${median(sus).toFixed(2)} ms, resume ${median(res).toFixed(2)} ms`);
} finally {
  await host.close();
  dir.dispose();
}
