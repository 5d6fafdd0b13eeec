// Same-process A/B of where WAL checkpoints run under the group_commit_appends_per_s load (SQLite, 100
// sessions appending at once, each awaiting its append before the next): journal A with
// `walCheckpoint: false` (SQLite's auto-checkpoint inside the COMMIT that crosses 1000 pages) against
// journal B with the default (sqlite-checkpointer.ts: a worker thread copies, the writer restarts the
// WAL at 4000 pages), in alternating rounds (ABBA…) so a shared machine's drift hits both alike:
// `npx tsx bench/profile/group-commit-ab.ts [rounds per side] [sessions]`. Prints append p50/p90/p95/
// p99 and appends/s for each side.
import { SqliteJournal } from "../../src/journal/sqlite.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { median, percentile } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import { concurrentAppends } from "../figures/group-commit.js";

const rounds = Number(process.argv[2] ?? 20);
const sessions = Number(process.argv[3] ?? 100);
const each = 30;
const dir = scratchDir("group-commit-ab");
const sides = {
  inline: SqliteJournal.open(dir.file("inline.db"), { walCheckpoint: false }),
  worker: SqliteJournal.open(dir.file("worker.db")),
};
try {
  const events = echoEventStream(each);
  const lat = { inline: [] as number[], worker: [] as number[] };
  const rates = { inline: [] as number[], worker: [] as number[] };
  // One unrecorded warm-up round each, then ABBA.
  for (let r = -1; r < rounds; r++) {
    const order: (keyof typeof sides)[] = r % 2 === 0 ? ["inline", "worker"] : ["worker", "inline"];
    for (const side of order) {
      const run = await concurrentAppends(sides[side], sessions, each, events, `${side}${r}`);
      if (r < 0) continue;
      lat[side].push(...run.latencies);
      rates[side].push(run.perS);
    }
  }
  for (const side of ["inline", "worker"] as const) {
    const l = lat[side];
    const ck = sides[side].walCheckpointStats;
    process.stdout.write(
      `${side.padEnd(6)} ${median(rates[side]).toFixed(0)} appends/s; p50 ${median(l).toFixed(2)}, p90 ${percentile(l, 90).toFixed(2)}, p95 ${percentile(l, 95).toFixed(2)}, p99 ${percentile(l, 99).toFixed(2)} ms (n ${l.length}); worker checkpoints ${ck.background}, inline ${ck.inline}\n`,
    );
  }
} finally {
  await sides.inline.close();
  await sides.worker.close();
  dir.dispose();
}
