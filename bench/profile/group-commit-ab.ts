// Same-process A/B of where WAL checkpoints run under the group_commit_appends_per_s load (SQLite, 100
// sessions appending at once, each awaiting its append before the next): journal A with
// `walCheckpoint: false` (SQLite's auto-checkpoint inside the COMMIT that crosses 1000 pages) against
// journal B with the default (src/journal/sqlite/checkpointer.ts: a worker thread copies, the writer restarts the
// WAL at 4000 pages), in alternating rounds (ABBA…) so a shared machine's drift hits both alike:
// `npx tsx bench/profile/group-commit-ab.ts [rounds per side] [sessions]`. Prints append p50/p90/p95/
// p99 and appends/s for each side.
// With OLD_TREE (`… [rounds] [sessions] OLD_TREE`, another checkout with node_modules linked, e.g.
// `git archive <commit> | tar -x -C /tmp/old && ln -s $PWD/node_modules /tmp/old/`) the sides are that
// tree's SqliteJournal ("old") against this tree's ("new"), both with their defaults: a code change's
// A/B under the same load, in the same process.
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { median, percentile } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import { concurrentAppends } from "../figures/group-commit.js";

const rounds = Number(process.argv[2] ?? 20);
const sessions = Number(process.argv[3] ?? 100);
const each = 30;
const oldTree = process.argv[4];
const dir = scratchDir("group-commit-ab");
type Side = Journal & { readonly walCheckpointStats: { background: number; inline: number } };
const [a, b] = oldTree === undefined ? (["inline", "worker"] as const) : (["old", "new"] as const);
const OldJournal =
  oldTree === undefined
    ? undefined
    : // Trees before the journal's folder per backend keep SQLite in src/journal/sqlite.ts.
      (
        (await import(
          resolve(
            oldTree,
            existsSync(resolve(oldTree, "src/journal/sqlite/journal.ts"))
              ? "src/journal/sqlite/journal.ts"
              : "src/journal/sqlite.ts",
          )
        )) as { SqliteJournal: typeof SqliteJournal }
      ).SqliteJournal;
const sides: Record<string, Side> =
  OldJournal === undefined
    ? {
        inline: SqliteJournal.open(dir.file("inline.db"), { walCheckpoint: false }),
        worker: SqliteJournal.open(dir.file("worker.db")),
      }
    : { old: OldJournal.open(dir.file("old.db")), new: SqliteJournal.open(dir.file("new.db")) };
try {
  const events = echoEventStream(each);
  const lat: Record<string, number[]> = { [a]: [], [b]: [] };
  const rates: Record<string, number[]> = { [a]: [], [b]: [] };
  // One unrecorded warm-up round each, then ABBA.
  for (let r = -1; r < rounds; r++) {
    const order = r % 2 === 0 ? [a, b] : [b, a];
    for (const side of order) {
      const run = await concurrentAppends(sides[side]!, sessions, each, events, `${side}${r}`);
      if (r < 0) continue;
      lat[side]!.push(...run.latencies);
      rates[side]!.push(run.perS);
    }
  }
  for (const side of [a, b]) {
    const l = lat[side]!;
    const ck = sides[side]!.walCheckpointStats;
    const mean = l.reduce((x, y) => x + y, 0) / l.length;
    process.stdout.write(
      `${side.padEnd(6)} ${median(rates[side]!).toFixed(0)} appends/s; mean ${mean.toFixed(2)}, p50 ${median(l).toFixed(2)}, p90 ${percentile(l, 90).toFixed(2)}, p95 ${percentile(l, 95).toFixed(2)}, p99 ${percentile(l, 99).toFixed(2)} ms (n ${l.length}); worker checkpoints ${ck.background}, inline ${ck.inline}\n`,
    );
  }
} finally {
  for (const side of Object.values(sides)) await side.close();
  dir.dispose();
}
