// Why the WAL checkpointer worker slowed one session's appends (issue 44): single-writer appends/s of
// SqliteJournal.append (one event per transaction, the journal_append_ratio load) under several WAL
// checkpoint arrangements, in alternating rounds in one process, each round on fresh journals:
//   auto      walCheckpoint: false (SQLite's auto-checkpoint inside the COMMIT crossing 1000 pages)
//   default   the journal's default (a lone writer: SQLite's auto-checkpoint at backgroundPages, 1000)
//   worker    dd98629's arrangement for every commit: the worker copies at 1000 frames, the writer
//             restarts the WAL at 4000, a wal_checkpoint(NOOP) read after each commit (forced here by one
//             grouped commit first and loneCommits out of reach)
//   auto4k    SQLite's auto-checkpoint at 4000 frames, no worker: the worker's WAL size without the worker
//   noop      auto + one `PRAGMA wal_checkpoint(NOOP)` after every commit (the per-commit read alone)
// With [warm] appends first (untimed, another session of the same journal) the WAL file has already
// grown to its largest before the timed appends, which then overwrite it instead of extending it.
// Prints appends/s medians per side, how many of the timed commits made the -wal file longer (an
// fdatasync that must also write the file's new size and blocks: bench/profile/fsync-extend.ts), and
// the -wal file's size after the timed appends, in frames. The stat after each append costs every
// side the same.
// Run: npx tsx bench/profile/checkpointer-single.ts [rounds] [appends per round] [sides,comma-separated] [warm]
import { statSync } from "node:fs";
import type Database from "better-sqlite3";
import { SqliteJournal, type SqliteJournalOptions } from "../../src/journal/sqlite/journal.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { median } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import { created } from "../../test/journal/sessions.js";

const rounds = Number(process.argv[2] ?? 6);
const perRound = Number(process.argv[3] ?? 2000);
const SIDES: Record<string, SqliteJournalOptions & { noop?: boolean; grouped?: boolean }> = {
  auto: { walCheckpoint: false },
  default: {},
  worker: { walCheckpoint: { loneCommits: Number.MAX_SAFE_INTEGER }, grouped: true },
  auto4k: { walCheckpoint: { backgroundPages: 4000 } },
  noop: { walCheckpoint: false, noop: true },
};
const names = (process.argv[4] ?? Object.keys(SIDES).join(",")).split(",");
/** Appends made (untimed) before the timed ones, on another session of the same journal. */
const warm = Number(process.argv[5] ?? 0);
const events = echoEventStream(Math.max(perRound, warm));
const dir = scratchDir("checkpointer-single");
const rates: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const walFrames: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
const extending: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
try {
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const opts = SIDES[name];
      if (opts === undefined) throw new Error(`unknown side ${name}`);
      const file = dir.file(`${name}-${r}.db`);
      const journal = SqliteJournal.open(file, opts);
      const db = (journal as unknown as { db: Database.Database }).db;
      const noop = opts.noop === true ? db.prepare("PRAGMA wal_checkpoint(NOOP)") : undefined;
      if (opts.grouped === true) await created(journal, "g1", "g2");
      if (opts.grouped === true) await Promise.all(["g1", "g2"].map((g) => journal.append(g, 0, 0, events[0]!)));
      await created(journal, "w");
      await journal.newFence("w");
      for (let i = 0; i < warm; i++) await journal.append("w", i, 1, events[i]!);
      await created(journal, "s");
      await journal.newFence("s");
      let size = statSync(`${file}-wal`).size;
      let extended = 0;
      const t0 = performance.now();
      for (let i = 0; i < perRound; i++) {
        await journal.append("s", i, 1, events[i]!);
        noop?.get();
        const now = statSync(`${file}-wal`).size;
        if (now > size) extended += 1;
        size = now;
      }
      const rate = perRound / ((performance.now() - t0) / 1000);
      if (r > 0) rates[name]!.push(rate);
      extending[name]!.push(extended);
      walFrames[name]!.push(Math.round((statSync(`${file}-wal`).size - 32) / (4096 + 24)));
      await journal.close();
    }
  }
  for (const name of names) {
    console.log(
      name.padEnd(10),
      `appends/s median ${Math.round(median(rates[name]!))}`.padEnd(28),
      `all ${rates[name]!.map(Math.round).join(" ")}`,
      `| commits extending the -wal ${extending[name]!.join(" ")}`,
      `| wal file frames at end ${walFrames[name]!.join(" ")}`,
    );
  }
} finally {
  dir.dispose();
}
