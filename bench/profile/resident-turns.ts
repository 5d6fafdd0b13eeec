// Profiles echo turns on a host holding N resident echo sessions (argv[2], default 10,000), for the
// turn_10k_resident_* figures: `node --import tsx --cpu-prof --cpu-prof-dir DIR bench/profile/resident-turns.ts N`,
// then `npx tsx bench/profile/summarize.ts FILE 30 --after MS` with MS the printed start of the turns.
// Invariant: the turns measured are on random resident sessions, as in the figure.
import { Host } from "../../src/host/index.js";
import { textMessage } from "../../src/model/text.js";
import { promptText } from "../lib/echo-turns.js";
import { median } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";

const n = Number(process.argv[2] ?? 10_000);
const turns = Number(process.argv[3] ?? 2_000);
const signal = new AbortController().signal;
const dir = scratchDir("resident", "memory");
const host = await Host.open({ dataDir: dir.path, journal: dir.file("journal.db") });
const t0 = performance.now();
try {
  const sessions: string[] = [];
  for (let i = 0; i < n; i++) {
    const uid = (await host.createSession({ harness: "echo" })).uid;
    await host.placer.exec({ session: uid, inputs: [textMessage("user", promptText(i))], signal });
    sessions.push(uid);
  }
  process.stdout.write(`turns start at ${Math.round(performance.now() - t0)} ms\n`);
  const ms: number[] = [];
  for (let i = 0; i < turns; i++) {
    const uid = sessions[Math.floor(Math.random() * sessions.length)] as string;
    const s = performance.now();
    await host.placer.exec({ session: uid, inputs: [textMessage("user", promptText(i))], signal });
    ms.push(performance.now() - s);
  }
  process.stdout.write(`${n} resident: p50 ${median(ms).toFixed(3)} ms over ${turns} turns\n`);
} finally {
  await host.close();
  dir.dispose();
}
