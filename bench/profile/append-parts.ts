// Where one SqliteJournal.append's time goes, measured in place (each step between real WAL fsyncs,
// where code runs slower than in a warm loop): the same database and statements, interleaved per
// operation, median per variant. Each variant adds one piece of what an append does to a raw insert:
//   insert      raw INSERT of pre-encoded row bytes (the journal_append_ratio baseline's statement)
//   +head       + the CAS read of the head and the head row update (the journal's statements)
//   +encode     + toBinary of the event
//   +chain      + the record's content hash (proto3-JSON, JCS, sha256)
//   commitTx    the journal's own synchronous transaction (all of the above, plus checks)
//   append      SqliteJournal.append (commitTx behind the async Journal interface)
// Observes only. Run: npx tsx bench/profile/append-parts.ts [appends]
import type Database from "better-sqlite3";
import { toBinary } from "@bufbuild/protobuf";
import { EventSchema, type Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import { chainEvents } from "../../src/journal/chain.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { median } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import { created } from "../../test/journal/sessions.js";

interface JournalInternals {
  db: Database.Database;
  commitTx(session: string, expectedLastSeq: number, fence: number, events: readonly Event[]): unknown;
  stmts: { selectHead: Database.Statement<[string]>; insertEvent: Database.Statement; moveHead: Database.Statement };
}

const n = Number(process.argv[2] ?? 1500);
const dir = scratchDir("append-parts");
const journal = SqliteJournal.open(dir.file("journal.db"));
const inside = journal as unknown as JournalInternals;
const st = inside.stmts;
const events = echoEventStream(n + 20);
const records = chainEvents({ seq: 0, hash: "" }, 1, events);
const encoded = records.map((r) => toBinary(EventSchema, r.event));

const names = ["insert", "+head", "+encode", "+chain", "commitTx", "append"] as const;
await created(journal, ...names);
for (const name of names) await journal.newFence(name);
const tx = (session: string, head: boolean, encode: boolean, chain: boolean) =>
  inside.db.transaction((i: number) => {
    const r = records[i]!;
    if (chain) chainEvents({ seq: i, hash: r.prevHash }, 1, [events[i]!]);
    if (head) st.selectHead.get(session);
    st.insertEvent.run(
      session,
      r.seq,
      r.prevHash,
      r.contentHash,
      1,
      encode ? toBinary(EventSchema, events[i]!) : encoded[i]!,
    );
    if (head) st.moveHead.run(session, r.seq, r.contentHash, "NONE", Date.now());
  }).immediate;
const steps: Record<(typeof names)[number], (i: number) => unknown> = {
  insert: tx("insert", false, false, false),
  "+head": tx("+head", true, false, false),
  "+encode": tx("+encode", true, true, false),
  "+chain": tx("+chain", true, true, true),
  commitTx: (i) => inside.commitTx("commitTx", i, 1, [events[i]!]),
  append: (i) => journal.append("append", i, 1, events[i]!),
};
const times = new Map<string, number[]>(names.map((k) => [k, []]));
for (let i = 0; i < n + 10; i++) {
  for (const name of names) {
    const t0 = performance.now();
    await steps[name](i);
    const ms = performance.now() - t0;
    if (i >= 10) times.get(name)!.push(ms);
  }
}
const base = median(times.get("insert")!);
console.log(`${n} appends per variant, interleaved; median ms per operation (ratio = insert / variant)`);
for (const name of names) {
  const m = median(times.get(name)!);
  console.log(`${name.padEnd(10)} ${m.toFixed(3)} ms   ratio ${(base / m).toFixed(3)}`);
}
await journal.close();
dir.dispose();
