// What a long *compacted* session costs per operation once it is in the host's caches: a session of
// EVENTS echo-turn events closed by a compaction record near the head (so a stateless turn's
// Start.history is a few events, §16), driven through Placer.exec and Placer.suspend+resume, against a
// 10-event session in the same journal, turns alternating. Shows whether an operation re-reads or
// re-folds the whole log (the record cache's projection) rather than what the stateless contract
// itself costs. `npx tsx bench/profile/long-lean.ts [EVENTS] [TURNS]` (default 200,000 and 9).
import { textMessage } from "../../src/controller/events.js";
import { Host } from "../../src/host/index.js";
import { promptText } from "../lib/echo-turns.js";
import { appendCompactionTurn, buildLongSession } from "../lib/long-build.js";
import { median } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";

const events = Number(process.argv[2] ?? 200_000);
const turns = Number(process.argv[3] ?? 9);
const signal = new AbortController().signal;
const dir = scratchDir("long-lean");
const mib = (n: number) => Math.round(n / 2 ** 20);
const host = await Host.open({ dataDir: dir.path, journal: dir.file("journal.db") });
try {
  const short = (await host.createSession({ harness: "echo" })).uid;
  await buildLongSession(host.journal, short, 10);
  const long = (await host.createSession({ harness: "echo" })).uid;
  await buildLongSession(host.journal, long, events);
  // One turn whose OUTPUT is a compaction record of 1..built-5: later turns' history starts near the head.
  await appendCompactionTurn(host.journal, long);
  const rssBuilt = process.memoryUsage().rss;
  const timed = async (f: () => Promise<unknown>): Promise<number> => {
    const t0 = performance.now();
    await f();
    return performance.now() - t0;
  };
  const exec = (uid: string, i: number) => () =>
    host.placer.exec({ session: uid, inputs: [textMessage("user", promptText(i))], signal });
  const cycle = (uid: string) => async () => {
    await host.placer.suspend(uid, signal);
    await host.placer.resume(uid, signal);
  };
  const first = await timed(exec(long, 0));
  const ms = {
    longTurn: [] as number[],
    shortTurn: [] as number[],
    longCycle: [] as number[],
    shortCycle: [] as number[],
  };
  for (let i = 1; i <= turns; i++) {
    ms.longTurn.push(await timed(exec(long, i)));
    ms.shortTurn.push(await timed(exec(short, i)));
    ms.longCycle.push(await timed(cycle(long)));
    ms.shortCycle.push(await timed(cycle(short)));
  }
  const p = (xs: number[]) => median(xs).toFixed(2);
  process.stdout.write(
    `${events} events + compaction: first turn ${Math.round(first)} ms; turn p50 ${p(ms.longTurn)} ms vs ${p(ms.shortTurn)} ms at 10 events (${(median(ms.longTurn) / median(ms.shortTurn)).toFixed(2)}×); suspend+resume p50 ${p(ms.longCycle)} ms vs ${p(ms.shortCycle)} ms (${(median(ms.longCycle) / median(ms.shortCycle)).toFixed(2)}×); rss after build ${mib(rssBuilt)} MiB, after turns ${mib(process.memoryUsage().rss)} MiB; record cache ${mib(host.placer.records.bytes)} MiB\n`,
  );
} finally {
  await host.close();
  dir.dispose();
}
