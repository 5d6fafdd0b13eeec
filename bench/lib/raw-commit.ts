// The disk's price of one durable commit, measured in the same run as the end-to-end figures: a
// one-row better-sqlite3 transaction (BEGIN IMMEDIATE … COMMIT) with the journal's durability settings
// (WAL, synchronous=FULL). Invariant: same pragmas as SqliteJournal.open, same directory as the
// figure's journal, so the floor it gives is the one the host's commits pay.
import Database from "better-sqlite3";
import { median } from "./stats.js";

function openRawCommitDb(path: string): Database.Database {
  const db = new Database(path, { timeout: 5000 });
  db.pragma("busy_timeout = 5000");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.exec("CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v BLOB NOT NULL)");
  return db;
}

/** A raw durable committer for use in place: `commit(rows)` writes `rows` 180-byte rows in one transaction. */
export function rawCommitter(path: string): { commit(rows: number): void; close(): void } {
  const db = openRawCommitDb(path);
  const insert = db.prepare<[Uint8Array]>("INSERT INTO t (v) VALUES (?)");
  const row = new Uint8Array(180);
  const commit = db.transaction((rows: number) => {
    for (let i = 0; i < rows; i++) insert.run(row);
  }).immediate;
  return { commit: (rows) => commit(rows), close: () => db.close() };
}

/** Median ms of `n` one-row durable commits into a scratch database at `path`, back to back. */
export function rawCommitMs(path: string, n: number): number {
  const db = openRawCommitDb(path);
  try {
    const insert = db.prepare<[number, Uint8Array]>("INSERT INTO t (k, v) VALUES (?, ?)");
    const commit = db.transaction((k: number) => insert.run(k, new Uint8Array(180))).immediate;
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      commit(i);
      ms.push(performance.now() - t0);
    }
    return median(ms);
  } finally {
    db.close();
  }
}
