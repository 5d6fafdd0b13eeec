// The distribution of single-append latencies, as journal_append_ratio runs them (bursts of 200 into a
// fresh session, then 200 raw inserts of the same row bytes), over 10 bursts each: median, mean, p99,
// max, and the share of the total time spent in the slowest 2 %. The figure
// divides throughputs (total time), so a heavier tail lowers it even when the medians are close.
// Observes only. Run: npx tsx bench/profile/append-tails.ts
import Database from "better-sqlite3";
import { toBinary } from "@bufbuild/protobuf";
import { EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { chainEvents } from "../../src/journal/chain.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { scratchDir } from "../lib/tmp.js";
import { created } from "../../test/journal/sessions.js";

const dir = scratchDir("append-tails");
const journal = SqliteJournal.open(dir.file("journal.db"));
const raw = new Database(dir.file("raw.db"));
raw.pragma("journal_mode = WAL");
raw.pragma("synchronous = FULL");
raw.exec(`CREATE TABLE events (session TEXT NOT NULL, seq INTEGER NOT NULL, prev_hash TEXT NOT NULL, content_hash TEXT NOT NULL,
  fence INTEGER NOT NULL, event BLOB NOT NULL, PRIMARY KEY (session, seq)) WITHOUT ROWID`);
const insert = raw.prepare<[string, number, string, string, Uint8Array]>(
  "INSERT INTO events VALUES (?, ?, ?, ?, 1, ?)",
);
const events = echoEventStream(200);
const records = chainEvents({ seq: 0, hash: "" }, 1, events);
const bytes = records.map((r) => toBinary(EventSchema, r.event));
const insertOne = raw.transaction((session: string, i: number) => {
  const r = records[i]!;
  insert.run(session, r.seq, r.prevHash, r.contentHash, bytes[i]!);
}).immediate;

const appendMs: number[] = [];
const insertMs: number[] = [];
for (let burst = 0; burst < 10; burst++) {
  const session = `sess-tails-${burst}`;
  await created(journal, session);
  await journal.newFence(session);
  for (let i = 0; i < events.length; i++) {
    const t0 = performance.now();
    await journal.append(session, i, 1, events[i]!);
    appendMs.push(performance.now() - t0);
  }
  for (let i = 0; i < events.length; i++) {
    const t0 = performance.now();
    insertOne(session, i);
    insertMs.push(performance.now() - t0);
  }
}
function describe(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const total = ms.reduce((a, b) => a + b, 0);
  const slowest = sorted.slice(Math.floor(sorted.length * 0.98)).reduce((a, b) => a + b, 0);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
  return `median ${at(0.5).toFixed(3)} mean ${(total / ms.length).toFixed(3)} p99 ${at(0.99).toFixed(2)} max ${sorted.at(-1)!.toFixed(2)} ms; slowest 2 % hold ${((slowest / total) * 100).toFixed(1)} %`;
}
console.log(`journal append  ${describe(appendMs)}`);
console.log(`raw insert      ${describe(insertMs)}`);
await journal.close();
raw.close();
dir.dispose();
