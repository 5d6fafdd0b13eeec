// Where the journal's head pointer lives, priced in place: one durable commit of an event row alone,
// with the CAS read and head update of a separate sessions row (SqliteJournal schema 1: a second
// B-tree page in every WAL commit), and with the head kept in a sentinel row of the events table itself
// (key (session, HEAD_ROW_SEQ), schema 2: the newest event's neighbour, usually the same leaf page). Interleaved,
// per-operation medians; ratio = insert / variant. Observes only (a scratch database).
// Run: npx tsx bench/profile/head-placement.ts [commits]
import Database from "better-sqlite3";
import { HEAD_ROW_SEQ } from "../../src/journal/sqlite/schema.js";
import { median } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
const n = Number(process.argv[2] ?? 1500);
const dir = scratchDir("head-placement");
const db = new Database(dir.file("x.db"));
db.pragma("journal_mode = WAL");
db.pragma("synchronous = FULL");
db.exec(`CREATE TABLE events (session TEXT NOT NULL, seq INTEGER NOT NULL, prev_hash TEXT NOT NULL, content_hash TEXT NOT NULL, fence INTEGER NOT NULL, event BLOB NOT NULL, PRIMARY KEY (session, seq)) WITHOUT ROWID;
CREATE TABLE sessions (uid TEXT PRIMARY KEY, fence INTEGER, last_seq INTEGER, last_hash TEXT, compute_state TEXT, updated_at_ms INTEGER);`);
for (const s of ["a", "b", "c"]) db.prepare("INSERT INTO sessions VALUES (?, 1, 0, '', 'NONE', 0)").run(s);
db.prepare(`INSERT INTO events VALUES ('c', ${HEAD_ROW_SEQ}, '', '', 0, x'')`).run();
const ins = db.prepare("INSERT INTO events VALUES (?, ?, ?, ?, 1, ?)");
const upd = db.prepare("UPDATE sessions SET last_seq = ?, last_hash = ?, updated_at_ms = ? WHERE uid = ?");
const sel = db.prepare("SELECT fence, last_seq, last_hash FROM sessions WHERE uid = ?");
const sentSel = db.prepare(`SELECT prev_hash, content_hash FROM events WHERE session = ? AND seq = ${HEAD_ROW_SEQ}`);
const sentUpd = db.prepare(
  `UPDATE events SET prev_hash = ?, content_hash = ? WHERE session = ? AND seq = ${HEAD_ROW_SEQ}`,
);
const h = "ab".repeat(32);
const blob = Buffer.alloc(180, 7);
const A = db.transaction((i: number) => {
  ins.run("a", i, h, h, blob);
}).immediate;
const B = db.transaction((i: number) => {
  sel.get("b");
  ins.run("b", i, h, h, blob);
  upd.run(i, h, Date.now(), "b");
}).immediate;
const C = db.transaction((i: number) => {
  sentSel.get("c");
  ins.run("c", i, h, h, blob);
  sentUpd.run(String(i), h, "c");
}).immediate;
const t = { insert: [] as number[], sessionsRow: [] as number[], sentinel: [] as number[] };
for (let i = 1; i <= n + 10; i++) {
  let t0 = performance.now();
  A(i);
  const a = performance.now() - t0;
  t0 = performance.now();
  B(i);
  const b = performance.now() - t0;
  t0 = performance.now();
  C(i);
  const c = performance.now() - t0;
  if (i > 10) {
    t.insert.push(a);
    t.sessionsRow.push(b);
    t.sentinel.push(c);
  }
}
const base = median(t.insert);
for (const [k, v] of Object.entries(t)) console.log(k.padEnd(12), median(v).toFixed(3), (base / median(v)).toFixed(3));
db.close();
dir.dispose();
