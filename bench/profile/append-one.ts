// Where one SqliteJournal.append goes, this tree against another (issue 44: "the other ~13 %"), in one
// process, alternating blocks of appends between the two trees (so load drift hits both alike). Per
// append, median µs over all blocks:
//   chain       chainEvents of one event: proto3-JSON canonicalisation, JCS and sha256 (the hashes)
//   encode      toBinary of the event (the stored bytes)
//   project     projectComputeState + projectPins of the record (the head row's state, the pin)
//   commitTx    the journal's own synchronous transaction on a journal with synchronous=OFF: all of the
//               above plus its statements, BEGIN and COMMIT, with no fsync (the CPU of a commit)
//   append      SqliteJournal.append on a journal with each tree's defaults (synchronous=FULL, its WAL
//               checkpointing), awaited: what journal_append_ratio times
// and the SQLite statements one append runs (counted by wrapping every prepared statement's run/get/
// all/iterate, BEGIN and COMMIT included, and the checkpointer's own). Observes only; reaches into
// SqliteJournal's private commitTx, db and stmts.
// Run: npx tsx bench/profile/append-one.ts OTHER_TREE [blocks] [appends per block]
//   OTHER_TREE: another checkout sharing this node_modules, e.g.
//   git worktree add --detach /tmp/base 9621a68 && ln -s $PWD/node_modules /tmp/base/
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import Database from "better-sqlite3";
import type { Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { median } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";

const other = process.argv[2];
if (other === undefined) throw new Error("usage: append-one.ts OTHER_TREE [blocks] [appends per block]");
const blocks = Number(process.argv[3] ?? 20);
const perBlock = Number(process.argv[4] ?? 100);

// Every statement of every connection opened from here on counts its executions.
let statements = 0;
const prepare = Database.prototype.prepare;
Database.prototype.prepare = function (this: Database.Database, sql: string) {
  const stmt = prepare.call(this, sql) as unknown as Record<string, unknown>;
  for (const m of ["run", "get", "all", "iterate"]) {
    const f = stmt[m] as (...a: unknown[]) => unknown;
    stmt[m] = (...a: unknown[]) => {
      statements += 1;
      return f.apply(stmt, a);
    };
  }
  return stmt as unknown as Database.Statement;
} as typeof Database.prototype.prepare;

interface JournalLike {
  createSession(meta: { uid: string; project: string; harness: string }): Promise<unknown>;
  newFence(session: string): Promise<number>;
  append(session: string, expectedLastSeq: number, fence: number, event: Event): Promise<unknown>;
  close(): Promise<void>;
}
interface Tree {
  readonly name: string;
  chainEvents(head: { seq: number; hash: string }, fence: number, events: readonly Event[]): { event: Event }[];
  encode(event: Event): Uint8Array;
  project(record: { seq: number; event: Event }): void;
  open(path: string): JournalLike;
}

function sqliteModule(root: string): string {
  const foldered = "src/journal/sqlite/journal.ts";
  return existsSync(resolve(root, foldered)) ? foldered : "src/journal/sqlite.ts";
}

async function load(name: string, root: string): Promise<Tree> {
  const chain = await import(resolve(root, "src/journal/chain.ts"));
  const state = await import(resolve(root, "src/journal/compute-state.ts"));
  // Trees before 47ee8ac have no pin projection in the append.
  const pin = await import(resolve(root, "src/journal/pin.ts")).catch(() => undefined);
  const gen = await import(resolve(root, "src/gen/agentsessions/v1/common_pb.ts"));
  const pb = await import("@bufbuild/protobuf");
  // Trees before the journal's folder per backend keep SQLite in src/journal/sqlite.ts.
  const sqlite = await import(resolve(root, sqliteModule(root)));
  return {
    name,
    chainEvents: chain.chainEvents,
    encode: (e) => pb.toBinary(gen.EventSchema, e),
    project: (r) => {
      state.projectComputeState("NONE", r.event);
      pin?.projectPins(undefined, [r]);
    },
    open: (path) => sqlite.SqliteJournal.open(path),
  };
}

const trees = [await load("this", resolve(".")), await load("other", resolve(other))];
const events = echoEventStream(blocks * perBlock);
const dir = scratchDir("append-one");
type Piece = "chain" | "encode" | "project" | "commitTx" | "append";
const PIECES: Piece[] = ["chain", "encode", "project", "commitTx", "append"];
const times = new Map<string, number[]>();
const stmtsPerAppend = new Map<string, number[]>();
const push = (tree: string, piece: string, us: number) => {
  const key = `${tree}:${piece}`;
  const list = times.get(key) ?? [];
  list.push(us);
  times.set(key, list);
};
const journals = trees.map((t) => {
  const durable = t.open(dir.file(`${t.name}-full.db`));
  const cpu = t.open(dir.file(`${t.name}-cpu.db`));
  (cpu as unknown as { db: Database.Database }).db.pragma("synchronous = OFF");
  return { tree: t, durable, cpu };
});
try {
  for (const j of journals) {
    await j.durable.createSession({ uid: "s", project: "default", harness: "" });
    await j.durable.newFence("s");
    await j.cpu.createSession({ uid: "s", project: "default", harness: "" });
    await j.cpu.newFence("s");
  }
  for (let b = 0; b < blocks; b++) {
    const order = b % 2 === 0 ? journals : [...journals].reverse();
    for (const { tree, durable, cpu } of order) {
      const commitTx = (cpu as unknown as { commitTx(...a: unknown[]): unknown }).commitTx;
      for (let i = b * perBlock; i < (b + 1) * perBlock; i++) {
        const event = events[i]!;
        let t = performance.now();
        const [record] = tree.chainEvents({ seq: i, hash: "0".repeat(64) }, 1, [event]);
        push(tree.name, "chain", (performance.now() - t) * 1000);
        t = performance.now();
        tree.encode(event);
        push(tree.name, "encode", (performance.now() - t) * 1000);
        t = performance.now();
        tree.project({ seq: i + 1, event: record!.event });
        push(tree.name, "project", (performance.now() - t) * 1000);
        t = performance.now();
        commitTx.call(cpu, "s", i, 1, [event]);
        push(tree.name, "commitTx", (performance.now() - t) * 1000);
        const s0 = statements;
        t = performance.now();
        await durable.append("s", i, 1, event);
        push(tree.name, "append", (performance.now() - t) * 1000);
        const list = stmtsPerAppend.get(tree.name) ?? [];
        list.push(statements - s0);
        stmtsPerAppend.set(tree.name, list);
      }
    }
  }
  const rows = [`| piece (median µs per append) | this tree | ${other} | this/other |`, "|---|---|---|---|"];
  for (const piece of PIECES) {
    const a = median(times.get(`this:${piece}`) ?? []);
    const o = median(times.get(`other:${piece}`) ?? []);
    rows.push(`| ${piece} | ${a.toFixed(1)} | ${o.toFixed(1)} | ${(a / o).toFixed(2)} |`);
  }
  const s = (name: string) => median(stmtsPerAppend.get(name) ?? []);
  rows.push(`| statements per append | ${s("this")} | ${s("other")} | |`);
  console.log(`${blocks} blocks × ${perBlock} appends per tree, alternating\n${rows.join("\n")}`);
} finally {
  for (const j of journals) {
    await j.durable.close();
    await j.cpu.close();
  }
  dir.dispose();
}
