// Micro-benchmark of one durable turn commit: SqliteJournal.appendBatch of 3 echo events vs raw
// better-sqlite3 commits of the same shapes (1 row; 3 rows; 3 rows + a session-row update), alternating.
// Run: npx tsx bench/profile/commit-micro.ts [n]
import Database from "better-sqlite3";
import { toBinary } from "@bufbuild/protobuf";
import { EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { median } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import { created } from "../../test/journal/sessions.js";

const n = Number(process.argv[2] ?? 300);
const dir = scratchDir("commit-micro");
const journal = SqliteJournal.open(dir.file("j.db"));
const db = new Database(dir.file("raw.db"));
db.pragma("journal_mode = WAL");
db.pragma("synchronous = FULL");
db.exec(
  "CREATE TABLE ev (s TEXT, seq INTEGER, p TEXT, c TEXT, f INTEGER, e BLOB, PRIMARY KEY (s, seq)) WITHOUT ROWID; CREATE TABLE ss (uid TEXT PRIMARY KEY, last_seq INTEGER, last_hash TEXT, upd INTEGER)",
);
db.prepare("INSERT INTO ss VALUES ('s', 0, '', 0)").run();
const ins = db.prepare("INSERT INTO ev VALUES ('s', ?, 'p', 'c', 1, ?)");
const upd = db.prepare("UPDATE ss SET last_seq = ?, last_hash = 'h', upd = ? WHERE uid = 's'");
let seq = 0;
const events = echoEventStream(3 * (n + 10));
const bytes = events.map((e) => toBinary(EventSchema, e));
const one = db.transaction(() => ins.run(++seq, bytes[seq % bytes.length])).immediate;
const three = db.transaction(() => {
  for (let k = 0; k < 3; k++) ins.run(++seq, bytes[seq % bytes.length]);
}).immediate;
const threeHead = db.transaction(() => {
  for (let k = 0; k < 3; k++) ins.run(++seq, bytes[seq % bytes.length]);
  upd.run(seq, Date.now());
}).immediate;
const t: Record<string, number[]> = { one: [], three: [], threeHead: [], journal: [] };
const session = "sess-1";
let head = 0;
await created(journal, session);
const fence = await journal.newFence(session);
for (let i = 0; i < n + 10; i++) {
  let t0 = performance.now();
  one();
  const a = performance.now() - t0;
  t0 = performance.now();
  three();
  const b = performance.now() - t0;
  t0 = performance.now();
  threeHead();
  const c = performance.now() - t0;
  t0 = performance.now();
  const recs = await journal.appendBatch(session, head, fence, events.slice(3 * i, 3 * i + 3));
  const d = performance.now() - t0;
  head = recs.at(-1)!.seq;
  if (i < 10) continue;
  t.one!.push(a);
  t.three!.push(b);
  t.threeHead!.push(c);
  t.journal!.push(d);
}
for (const [k, v] of Object.entries(t)) console.log(k.padEnd(10), median(v).toFixed(3), "ms");
await journal.close();
db.close();
dir.dispose();
