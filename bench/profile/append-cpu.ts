// Per-append CPU inside a group-commit batch, by piece: what one write of a batch of `sessions` appends
// costs the event loop (the write phase the grouped latency floor is made of: sessions × this + one
// fsync). The journal is opened with synchronous=OFF so the COMMIT costs no fsync and the times are the
// CPU; each variant runs `sessions` appends (one per session) in one transaction, interleaved per round,
// median µs per append over the rounds. Variants:
//   hash.tree   the record's content hash through the proto3-JSON tree + JCS (the old path)
//   hash        the record's content hash as hashRecord mints it now
//   encode      toBinary of the event
//   batch       SqliteJournal's own batch transaction (a savepoint per write, head read, inserts, head move)
// Observes only; reaches into SqliteJournal's private batchTx. Run:
// npx tsx bench/profile/append-cpu.ts [rounds] [sessions]
import { toBinary } from "@bufbuild/protobuf";
import { hashRecord, jcs, protoJson, sha256Hex } from "../../src/canon/index.js";
import { EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { median } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";

interface Stmt {
  run(...args: unknown[]): unknown;
  get(...args: unknown[]): unknown;
}
interface Internals {
  db: {
    pragma(s: string): unknown;
    transaction<A extends unknown[]>(f: (...a: A) => void): { immediate(...a: A): void; (...a: A): void };
  };
  batchTx(writes: readonly unknown[]): unknown;
  writeInTx(w: unknown): unknown;
  stmts: { selectHead: Stmt };
}

const rounds = Number(process.argv[2] ?? 60);
const sessions = Number(process.argv[3] ?? 100);
const each = 30;
const dir = scratchDir("append-cpu");
const journal = SqliteJournal.open(dir.file("j.db"), { walCheckpoint: false });
const inside = journal as unknown as Internals;
inside.db.pragma("synchronous = OFF");
inside.db.pragma("wal_autocheckpoint = 0");
const events = echoEventStream(each);
const prev = sha256Hex("prev");
let sink = 0;
const commitUs: number[] = [];
let head = 0;
const db = inside.db;
const empty = db.transaction(() => {});
const savepoints = db.transaction(() => {
  for (let s = 0; s < sessions; s++) empty();
}).immediate;
const heads = db.transaction(() => {
  for (let s = 0; s < sessions; s++) inside.stmts.selectHead.get(`s${s}`);
}).immediate;
const variants: Record<string, (round: number) => void> = {
  "tx+savepoints": () => savepoints(),
  "tx+selectHead": () => heads(),
  "hash.tree": () => {
    for (let s = 0; s < sessions; s++)
      sink += sha256Hex(
        jcs({ event: protoJson(EventSchema, events[s % each]!), prev_hash: prev, seq: String(s) }),
      ).length;
  },
  hash: () => {
    for (let s = 0; s < sessions; s++) sink += hashRecord(prev, s, events[s % each]!).length;
  },
  encode: () => {
    for (let s = 0; s < sessions; s++) sink += toBinary(EventSchema, events[s % each]!).length;
  },
  "batch.writes": () => {
    const writes = Array.from({ length: sessions }, (_, s) => ({
      kind: "append",
      session: `w${s}`,
      expectedLastSeq: head,
      fence: 0,
      events: [events[head % each]!],
    }));
    (db as unknown as { exec(s: string): void }).exec("BEGIN IMMEDIATE");
    const t0 = performance.now();
    for (const w of writes) inside.writeInTx(w);
    commitUs.push(performance.now() - t0);
    (db as unknown as { exec(s: string): void }).exec("COMMIT");
  },
  batch: () => {
    const writes = Array.from({ length: sessions }, (_, s) => ({
      kind: "append",
      session: `s${s}`,
      expectedLastSeq: head,
      fence: 0,
      events: [events[head % each]!],
    }));
    inside.batchTx(writes);
    head += 1;
  },
};
const times = new Map<string, number[]>(Object.keys(variants).map((k) => [k, []]));
for (let r = 0; r < rounds + 5; r++) {
  for (const [name, run] of Object.entries(variants)) {
    const t0 = performance.now();
    run(r);
    const us = ((performance.now() - t0) * 1000) / sessions;
    if (r >= 5) times.get(name)!.push(us);
  }
}
console.log(`${rounds} rounds of ${sessions} appends, interleaved; median µs per append (sink ${sink % 10})`);
for (const [name, t] of times) console.log(`${name.padEnd(14)} ${median(t).toFixed(2)} µs`);
console.log(
  `${"  of which writes".padEnd(14)} ${((median(commitUs.slice(5)) * 1000) / sessions).toFixed(2)} µs (before COMMIT)`,
);
await journal.close();
dir.dispose();
