// Where a cold open of a long session goes (cold_resume_1m_ms, bench/figures/million-events.ts): builds
// an N-event echo session, then times each full read a first operation may make, alone, on fresh
// instances — the chain check's walk (journal.verify), the record cache's fold, the stateless history
// read — and then what a fresh host's first turn on the session costs in all. Usage:
// npx tsx bench/profile/cold-open.ts [events]
import { textMessage } from "../../src/controller/events.js";
import { Host } from "../../src/host/index.js";
import { HistoryCache } from "../../src/placement/index.js";
import { RecordCache } from "../../src/placement/record-cache.js";
import { openEchoHost } from "../lib/echo-host.js";
import { buildLongSession } from "../lib/long-build.js";
import { scratchDir } from "../lib/tmp.js";

const events = Number(process.argv[2] ?? 200_000);
const dir = scratchDir("cold-open");
const dbPath = dir.file("journal.db");
const time = async <T>(what: string, f: () => Promise<T>): Promise<T> => {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const r = await f();
  const cpu = process.cpuUsage(c0);
  const wall = (performance.now() - t0).toFixed(0).padStart(7);
  console.log(`${what.padEnd(38)} ${wall} ms wall ${((cpu.user + cpu.system) / 1000).toFixed(0).padStart(7)} ms CPU`);
  return r;
};
try {
  const builder = await openEchoHost(dir.path, "local", dbPath);
  const uid = await builder.newSession();
  await buildLongSession(builder.journal, uid, events);
  await builder.close();

  const parts = await Host.open({ dataDir: dir.path, journal: dbPath, defaultHarness: "echo" });
  const { journal } = parts;
  const head = await journal.head(uid);
  await time("alone: chain walk (journal.verify)", () => journal.verify(uid));
  const window = await time("alone: record cache fold", () => new RecordCache().window(journal, uid, head));
  await time("alone: history read (whole window)", () =>
    new HistoryCache().get(journal, uid, head, window.log.historyBase(head.seq + 1)),
  );
  await parts.close();

  const host = await Host.open({ dataDir: dir.path, journal: dbPath, defaultHarness: "echo" });
  const signal = new AbortController().signal;
  await time("fresh host: first turn", () =>
    host.placer.exec({ session: uid, inputs: [textMessage("user", "hello")], signal }),
  );
  await time("fresh host: second turn", () =>
    host.placer.exec({ session: uid, inputs: [textMessage("user", "again")], signal }),
  );
  await host.close();
} finally {
  dir.dispose();
}
