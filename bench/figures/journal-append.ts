// journal_append_ratio: hash-chained SqliteJournal.append, one event per transaction, against raw
// better-sqlite3 INSERTs of the very same row bytes into a same-shaped table with the same durability
// (WAL, synchronous=FULL, one BEGIN IMMEDIATE transaction per row). Invariant: both sides write the
// same event stream to databases in the same directory, in alternating repetitions.
import Database from "better-sqlite3";
import { toBinary } from "@bufbuild/protobuf";
import { EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { chainEvents } from "../../src/journal/chain.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { hashColumn } from "../../src/journal/sqlite/hash.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { median, paired, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";
import { created } from "../../test/journal/sessions.js";

const RAW_SCHEMA = `CREATE TABLE events (
  session TEXT NOT NULL, seq INTEGER NOT NULL, prev_hash TEXT NOT NULL, content_hash TEXT NOT NULL,
  fence INTEGER NOT NULL, event BLOB NOT NULL, PRIMARY KEY (session, seq)) WITHOUT ROWID`;

interface RawRow {
  seq: number;
  /** The hashes in the journal's stored form (src/journal/sqlite/hash.ts: 32-byte BLOBs), encoded ahead of timing. */
  prevHash: string | Buffer;
  contentHash: string | Buffer;
  bytes: Uint8Array;
}

function openRaw(path: string): Database.Database {
  const db = new Database(path, { timeout: 5000 });
  db.pragma("busy_timeout = 5000");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.exec(RAW_SCHEMA);
  return db;
}

export const journalAppend: Figure = {
  key: "journal_append_ratio",
  title: "journal append (hash-chained, SQLite) vs raw insert",
  async run(opts: RunOptions): Promise<FigureResult> {
    const perRep = opts.quick ? 40 : 200;
    const reps = opts.quick ? 2 : 9;
    const warmup = 1;
    const events = echoEventStream(perRep);
    // The raw side inserts exactly the bytes the journal stores: same event encoding, same hashes in
    // the same stored form.
    const rows: RawRow[] = chainEvents({ seq: 0, hash: "" }, 1, events).map((r) => ({
      seq: r.seq,
      prevHash: hashColumn(r.prevHash),
      contentHash: hashColumn(r.contentHash),
      bytes: toBinary(EventSchema, r.event),
    }));
    const avgBytes = rows.reduce((n, r) => n + r.bytes.length, 0) / rows.length;
    const dir = scratchDir("append");
    const journal = SqliteJournal.open(dir.file("journal.db"));
    const raw = openRaw(dir.file("raw.db"));
    try {
      const insert = raw.prepare<[string, number, string | Buffer, string | Buffer, number, Uint8Array]>(
        "INSERT INTO events (session, seq, prev_hash, content_hash, fence, event) VALUES (?, ?, ?, ?, ?, ?)",
      );
      const insertOne = raw.transaction((session: string, r: RawRow) => {
        insert.run(session, r.seq, r.prevHash, r.contentHash, 1, r.bytes);
      }).immediate;
      const runs = await paired(
        reps,
        warmup,
        async (rep) => {
          const session = `sess-append-${rep}`;
          await created(journal, session);
          await journal.newFence(session);
          const t0 = performance.now();
          for (let i = 0; i < events.length; i++) {
            await journal.append(session, i, 1, events[i]!);
          }
          return events.length / ((performance.now() - t0) / 1000);
        },
        async (rep) => {
          const session = `sess-append-${rep}`;
          const t0 = performance.now();
          for (const r of rows) insertOne(session, r);
          return rows.length / ((performance.now() - t0) / 1000);
        },
      );
      const ratio = median(runs.ratios);
      return {
        status: "ok",
        value: round(ratio),
        unit: "×",
        measured: sampleOf(runs.subject.map(round), "appends/s"),
        baseline: {
          ...sampleOf(runs.baseline.map(round), "appends/s"),
          what: "raw better-sqlite3 INSERT, WAL + synchronous=FULL, one tx per row",
        },
        ratio: round(ratio),
        target: { op: ">=", value: 0.7 },
        details: {
          eventsPerRep: perRep,
          reps,
          avgEventBytes: Math.round(avgBytes),
          ratioOfMedians: round(median(runs.subject) / median(runs.baseline)),
        },
      };
    } finally {
      raw.close();
      await journal.close();
      dir.dispose();
    }
  },
};
