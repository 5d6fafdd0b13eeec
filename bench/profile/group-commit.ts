// The group-commit load of group_commit_appends_per_s (SQLite, 100 sessions appending at once, each
// awaiting its append before the next) without the baselines, for a CPU profile of what a batch costs:
// `node --import tsx --cpu-prof --cpu-prof-dir /tmp/prof bench/profile/group-commit.ts [rounds] [sessions]`
// then `npx tsx bench/profile/summarize.ts /tmp/prof/<file>.cpuprofile 30`. Prints appends/s, p50/p99,
// and how many batches the appends slower than the p99 came from (appends of one batch are acknowledged
// in the same instant, so one slow commit puts a whole batch into the tail).
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { median, percentile } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import { created } from "../../test/journal/sessions.js";

const rounds = Number(process.argv[2] ?? 10);
const sessions = Number(process.argv[3] ?? 100);
const each = 30;
const dir = scratchDir("group-commit-profile");
const journal = SqliteJournal.open(dir.file("grouped.db"));
try {
  const events = echoEventStream(each);
  const lat: number[] = [];
  const done: number[] = [];
  const rates: number[] = [];
  for (let r = 0; r < rounds; r++) {
    await created(journal, ...Array.from({ length: sessions }, (_, s) => `r${r}-${s}`));
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: sessions }, async (_, s) => {
        for (let i = 0; i < each; i++) {
          const a0 = performance.now();
          await journal.append(`r${r}-${s}`, i, 0, events[i]!);
          const a1 = performance.now();
          if (r > 0) {
            lat.push(a1 - a0);
            done.push(a1);
          }
        }
      }),
    );
    if (r > 0) rates.push((sessions * each) / ((performance.now() - t0) / 1000));
  }
  const stats = journal.groupCommitStats;
  const p99 = percentile(lat, 99);
  // Appends acknowledged within 0.05 ms of each other were settled by the same batch.
  const slowBatches = new Set(done.filter((_, i) => lat[i]! >= p99).map((t) => Math.round(t * 20))).size;
  process.stdout.write(
    `${median(rates).toFixed(0)} appends/s, p50 ${median(lat).toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, ${(stats.writes / stats.batches).toFixed(1)} writes/batch; the ${lat.filter((l) => l >= p99).length} appends at or above the p99 came from ${slowBatches} batches of ${stats.batches}\n`,
  );
} finally {
  await journal.close();
  dir.dispose();
}
