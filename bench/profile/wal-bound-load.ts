// Whether the concurrent-mode WAL stays within twice `resetPages` plus one commit under CPU load: the
// walStaysBounded test's load (12 sessions, 60 rounds of one group commit each, backgroundPages 16,
// resetPages 48) run `runs` times in one process, each on a fresh journal, with `burners` busy-looping
// child processes (`node -e 'for(;;);'`) competing for the cores, killed at the end. Prints the runs
// whose largest WAL exceeded the bound (with that run's counters) and the counters summed over all
// runs: `pinned` counts checkpoints a reader stopped short, `lockBusy` refused ones.
// It found the start-up read of the worker's connection pinning the WAL (docs/performance.md, "The
// WAL bound and readers"). It loads the machine's cores for its whole run: keep `runs` small.
// Run: npx tsx bench/profile/wal-bound-load.ts [runs] [burners]
import { type ChildProcess, spawn } from "node:child_process";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { inputEvent, outputEvent } from "../../test/journal/events.js";
import { created } from "../../test/journal/sessions.js";
import { scratchDir } from "../lib/tmp.js";

const runs = Number(process.argv[2] ?? 80);
const burnerCount = Number(process.argv[3] ?? 3);
const SESSIONS = 12;
const ROUNDS = 60;
const RESET_PAGES = 48;

const burners: ChildProcess[] = Array.from({ length: burnerCount }, () =>
  spawn(process.execPath, ["-e", "for(;;);"], { stdio: "ignore" }),
);
const totals = { inline: 0, pinned: 0, lockBusy: 0, background: 0 };
let over = 0;
const started = Date.now();
try {
  for (let run = 0; run < runs; run++) {
    const dir = scratchDir("wal-bound");
    const journal = SqliteJournal.open(dir.file("journal.db"), {
      walCheckpoint: { backgroundPages: 16, resetPages: RESET_PAGES },
    });
    try {
      await created(journal, ...Array.from({ length: SESSIONS }, (_, s) => `wal-${s}`));
      let maxLog = 0;
      let maxGrowth = 0;
      let prev = journal.walCheckpointStats.log;
      for (let r = 0; r < ROUNDS; r++) {
        await Promise.all(
          Array.from({ length: SESSIONS }, (_, s) =>
            journal.appendBatch(`wal-${s}`, r * 2, 0, [
              inputEvent(`round ${r} ${"x".repeat(600)}`),
              outputEvent(`reply ${r} ${"y".repeat(600)}`),
            ]),
          ),
        );
        const { log } = journal.walCheckpointStats;
        maxGrowth = Math.max(maxGrowth, log >= prev ? log - prev : log);
        maxLog = Math.max(maxLog, log);
        prev = log;
      }
      const stats = journal.walCheckpointStats;
      for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += stats[k];
      const bound = 2 * RESET_PAGES + maxGrowth;
      if (maxLog > bound) {
        over += 1;
        console.log(
          `run ${run}: maxLog ${maxLog} > bound ${bound} (inline ${stats.inline}, pinned ${stats.pinned}, lockBusy ${stats.lockBusy}, background ${stats.background})`,
        );
      }
    } finally {
      await journal.close();
      dir.dispose();
    }
  }
} finally {
  for (const b of burners) b.kill();
}
console.log(
  `${over} of ${runs} runs over the bound; burners ${burnerCount}; ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
    `inline ${totals.inline}, pinned ${totals.pinned}, lockBusy ${totals.lockBusy}, background ${totals.background}`,
);
