// WAL frames written per durable commit: 300 single-event SqliteJournal.append calls against 300 raw
// better-sqlite3 inserts of the same row bytes, each into a freshly checkpointed WAL; prints the
// frames per commit of each (a frame is one 4 KiB page plus its header). Observes only (scratch files).
// Run: npx tsx bench/profile/wal-frames.ts
import { statSync } from "node:fs";
import Database from "better-sqlite3";
import { toBinary } from "@bufbuild/protobuf";
import { EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { chainEvents } from "../../src/journal/chain.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { scratchDir } from "../lib/tmp.js";
import { created } from "../../test/journal/sessions.js";
const dir = scratchDir("wal-frames");
const journal = SqliteJournal.open(dir.file("journal.db"));
const raw = new Database(dir.file("raw.db"));
raw.pragma("journal_mode = WAL");
raw.pragma("synchronous = FULL");
raw.exec(
  `CREATE TABLE events (session TEXT NOT NULL, seq INTEGER NOT NULL, prev_hash TEXT NOT NULL, content_hash TEXT NOT NULL, fence INTEGER NOT NULL, event BLOB NOT NULL, PRIMARY KEY (session, seq)) WITHOUT ROWID`,
);
raw.pragma("wal_checkpoint(TRUNCATE)");
const ins = raw.prepare("INSERT INTO events VALUES (?, ?, ?, ?, 1, ?)");
const one = raw.transaction((s: string, r: { seq: number; prevHash: string; contentHash: string }, b: Uint8Array) => {
  ins.run(s, r.seq, r.prevHash, r.contentHash, b);
}).immediate;
const events = echoEventStream(300);
const recs = chainEvents({ seq: 0, hash: "" }, 1, events);
const bytes = recs.map((r) => toBinary(EventSchema, r.event));
await created(journal, "s");
await journal.newFence("s");
(journal as unknown as { db: Database.Database }).db.pragma("wal_checkpoint(TRUNCATE)");
for (let i = 0; i < 300; i++) await journal.append("s", i, 1, events[i]!);
for (let i = 0; i < 300; i++) one("s", recs[i]!, bytes[i]!);
const frames = (f: string) => (statSync(f).size - 32) / (4096 + 24);
console.log(
  "journal frames/commit",
  (frames(dir.file("journal.db-wal")) / 300).toFixed(2),
  "raw frames/commit",
  (frames(dir.file("raw.db-wal")) / 300).toFixed(2),
);
await journal.close();
raw.close();
dir.dispose();
