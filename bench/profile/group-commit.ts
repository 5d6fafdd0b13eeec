// The group-commit load of group_commit_appends_per_s (SQLite, 100 sessions appending at once, each
// awaiting its append before the next) without the baselines, for a CPU profile of what a batch costs:
// `node --import tsx --cpu-prof --cpu-prof-dir /tmp/prof bench/profile/group-commit.ts [rounds] [sessions]`
// then `npx tsx bench/profile/summarize.ts /tmp/prof/<file>.cpuprofile 30`. Prints appends/s and p50/p99.
import { SqliteJournal } from "../../src/journal/sqlite.js";
import { concurrentAppends } from "../figures/group-commit.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { median, percentile } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";

const rounds = Number(process.argv[2] ?? 10);
const sessions = Number(process.argv[3] ?? 100);
const each = 30;
const dir = scratchDir("group-commit-profile");
const journal = SqliteJournal.open(dir.file("grouped.db"));
try {
  const events = echoEventStream(each);
  const lat: number[] = [];
  const rates: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const run = await concurrentAppends(journal, sessions, each, events, `r${r}`);
    if (r > 0) {
      lat.push(...run.latencies);
      rates.push(run.perS);
    }
  }
  const stats = journal.groupCommitStats;
  process.stdout.write(
    `${median(rates).toFixed(0)} appends/s, p50 ${median(lat).toFixed(2)} ms, p99 ${percentile(lat, 99).toFixed(2)} ms, ${(stats.writes / stats.batches).toFixed(1)} writes/batch\n`,
  );
} finally {
  await journal.close();
  dir.dispose();
}
