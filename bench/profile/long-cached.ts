// Echo turns on a long session with the host's history and record caches sized by argv: shows what a
// session larger than historyCacheBytes / recordCacheBytes costs per turn (re-read every turn) against
// the same session held in the caches. `npx tsx bench/profile/long-cached.ts EVENTS CACHE_MIB [TURNS]`
// (CACHE_MIB 64 is the default budget). Invariant: the long and a 10-event session share one journal
// and their turns alternate, as in long_session_1m_ratio.
import { Host } from "../../src/host/index.js";
import { textMessage } from "../../src/model/text.js";
import { promptText } from "../lib/echo-turns.js";
import { buildLongSession } from "../lib/long-build.js";
import { median } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";

const events = Number(process.argv[2] ?? 400_000);
const cacheMib = Number(process.argv[3] ?? 64);
const turns = Number(process.argv[4] ?? 5);
const signal = new AbortController().signal;
const dir = scratchDir("long-cached");
const bytes = cacheMib * 1024 * 1024;
const host = await Host.open({
  dataDir: dir.path,
  journal: dir.file("journal.db"),
  limits: { historyCacheBytes: bytes, recordCacheBytes: bytes },
});
try {
  const short = (await host.createSession({ harness: "echo" })).uid;
  await buildLongSession(host.journal, short, 10);
  const long = (await host.createSession({ harness: "echo" })).uid;
  await buildLongSession(host.journal, long, events);
  const turn = async (uid: string, i: number): Promise<number> => {
    const t0 = performance.now();
    await host.placer.exec({ session: uid, inputs: [textMessage("user", promptText(i))], signal });
    return performance.now() - t0;
  };
  const first = await turn(long, 0);
  const longMs: number[] = [];
  const shortMs: number[] = [];
  for (let i = 1; i <= turns; i++) {
    longMs.push(await turn(long, i));
    shortMs.push(await turn(short, i));
  }
  process.stdout.write(
    `${events} events, caches ${cacheMib} MiB: first turn ${Math.round(first)} ms; p50 ${median(longMs).toFixed(2)} ms vs ${median(shortMs).toFixed(2)} ms at 10 events (${(median(longMs) / median(shortMs)).toFixed(2)}×); rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB\n`,
  );
} finally {
  await host.close();
  dir.dispose();
}
