// Per-batch timing of the group_commit_appends_per_s load (SQLite, `sessions` sessions appending at once,
// each awaiting its append before the next), to tell what makes a slow batch slow:
// `node --import tsx bench/profile/group-commit-batches.ts [rounds] [sessions] [inline]`
// (`inline`: the journal opened with `walCheckpoint: false`, SQLite's auto-checkpoint inside the COMMIT
// that crosses 1000 pages; omitted = the journal's default, checkpoints on a worker thread). For every
// batch it records the queue wait (first write queued → batch starts), the writes (batch start → last
// write's savepoint released), the COMMIT (→ batch returns: the fsync and anything run after it),
// whether a checkpoint ran inside the batch (with `inline`, the main database file changed — only a
// checkpoint writes it; otherwise the journal's inline-checkpoint counter moved), and the GC pauses
// that overlapped it.
// Prints the slowest batches with that split and the tail (p99 and above) attributed to causes.
// Reaches into SqliteJournal's private runBatch/writeInTx through the prototype: a profile, not an API.
import { statSync } from "node:fs";
import { PerformanceObserver, monitorEventLoopDelay } from "node:perf_hooks";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { median, percentile } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import { created } from "../../test/journal/sessions.js";

const rounds = Number(process.argv[2] ?? 10);
const sessions = Number(process.argv[3] ?? 100);
const inline = process.argv[4] === "inline";
const each = 30;

interface Batch {
  writes: number;
  queuedAt: number;
  start: number;
  lastWriteEnd: number;
  end: number;
  dbChanged: boolean;
  gcMs: number;
  round: number;
}

interface Internals {
  runBatch(this: unknown, writes: readonly unknown[]): unknown;
  writeInTx(this: unknown, w: unknown): unknown;
}
const proto = SqliteJournal.prototype as unknown as Internals;
const origRunBatch = proto.runBatch;
const origWriteInTx = proto.writeInTx;

const batches: Batch[] = [];
let current: Batch | undefined;
let firstQueuedAt: number | undefined;
let round = 0;
let dbFile = "";
const mtime = (): bigint => statSync(dbFile, { bigint: true }).mtimeNs;

proto.writeInTx = function (this: unknown, w: unknown) {
  const out = origWriteInTx.call(this, w);
  if (current !== undefined) current.lastWriteEnd = performance.now();
  return out;
};
const inlineCount = (j: unknown): number => (j as { walCheckpointStats: { inline: number } }).walCheckpointStats.inline;
proto.runBatch = function (this: unknown, writes: readonly unknown[]) {
  const before = inline ? mtime() : BigInt(inlineCount(this));
  const start = performance.now();
  current = {
    writes: writes.length,
    queuedAt: firstQueuedAt ?? start,
    start,
    lastWriteEnd: start,
    end: start,
    dbChanged: false,
    gcMs: 0,
    round,
  };
  firstQueuedAt = undefined;
  try {
    return origRunBatch.call(this, writes);
  } finally {
    current.end = performance.now();
    current.dbChanged = (inline ? mtime() : BigInt(inlineCount(this))) !== before;
    batches.push(current);
    current = undefined;
  }
};

const gcs: { start: number; end: number; kind: number }[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
    gcs.push({ start: e.startTime, end: e.startTime + e.duration, kind });
  }
}).observe({ entryTypes: ["gc"] });
const eld = monitorEventLoopDelay({ resolution: 1 });

const dir = scratchDir("group-commit-batches");
dbFile = dir.file("grouped.db");
const journal = SqliteJournal.open(dbFile, inline ? { walCheckpoint: false } : {});
const origAppend = journal.append.bind(journal);
journal.append = (...args: Parameters<typeof journal.append>) => {
  firstQueuedAt ??= performance.now();
  return origAppend(...args);
};
try {
  const events = echoEventStream(each);
  const lat: { ms: number; at: number }[] = [];
  eld.enable();
  for (let r = 0; r < rounds; r++) {
    round = r;
    await created(journal, ...Array.from({ length: sessions }, (_, s) => `r${r}-${s}`));
    await Promise.all(
      Array.from({ length: sessions }, async (_, s) => {
        for (let i = 0; i < each; i++) {
          const a0 = performance.now();
          await journal.append(`r${r}-${s}`, i, 0, events[i]!);
          const a1 = performance.now();
          if (r > 0) lat.push({ ms: a1 - a0, at: a1 });
        }
      }),
    );
  }
  eld.disable();
  // Let the observer deliver the last GC entries.
  await new Promise((resolve) => setTimeout(resolve, 50));
  for (const b of batches) {
    for (const g of gcs) {
      const overlap = Math.min(b.end, g.end) - Math.max(b.queuedAt, g.start);
      if (overlap > 0) b.gcMs += overlap;
    }
  }
  const measured = batches.filter((b) => b.round > 0);
  const total = (b: Batch) => b.end - b.queuedAt;
  const p99 = percentile(
    lat.map((l) => l.ms),
    99,
  );
  const f = (x: number) => x.toFixed(2).padStart(7);
  const row = (b: Batch) =>
    `${String(b.writes).padStart(4)} writes  wait ${f(b.start - b.queuedAt)}  writes ${f(b.lastWriteEnd - b.start)}  commit ${f(b.end - b.lastWriteEnd)}  total ${f(total(b))} ms  gc ${f(b.gcMs)}  ${b.dbChanged ? "CHECKPOINT" : ""}`;
  const out: string[] = [];
  out.push(
    `${measured.length} batches (${(measured.reduce((s, b) => s + b.writes, 0) / measured.length).toFixed(1)} writes/batch); append p50 ${median(lat.map((l) => l.ms)).toFixed(2)} ms, p90 ${percentile(
      lat.map((l) => l.ms),
      90,
    ).toFixed(2)} ms, p95 ${percentile(
      lat.map((l) => l.ms),
      95,
    ).toFixed(
      2,
    )} ms, p99 ${p99.toFixed(2)} ms; event-loop delay p99 ${(eld.percentile(99) / 1e6).toFixed(2)} ms, max ${(eld.max / 1e6).toFixed(2)} ms`,
  );
  const med = (sel: (b: Batch) => number) => median(measured.map(sel)).toFixed(2);
  out.push(
    `median batch: wait ${med((b) => b.start - b.queuedAt)}  writes ${med((b) => b.lastWriteEnd - b.start)}  commit ${med((b) => b.end - b.lastWriteEnd)}  total ${med(total)} ms`,
  );
  const ckpt = measured.filter((b) => b.dbChanged);
  out.push(
    `batches with a checkpoint inside: ${ckpt.length}; their commit median ${median(ckpt.map((b) => b.end - b.lastWriteEnd)).toFixed(2)} ms vs ${median(measured.filter((b) => !b.dbChanged).map((b) => b.end - b.lastWriteEnd)).toFixed(2)} ms without`,
  );
  out.push(
    `GC: ${gcs.length} pauses, ${gcs.reduce((s, g) => s + g.end - g.start, 0).toFixed(1)} ms in all, longest ${Math.max(0, ...gcs.map((g) => g.end - g.start)).toFixed(2)} ms`,
  );
  out.push("slowest batches:");
  for (const b of [...measured].sort((a, b) => total(b) - total(a)).slice(0, 10)) out.push(`  ${row(b)}`);
  const w = journal.walCheckpointStats;
  out.push(`worker checkpoints ${w.background}, inline ${w.inline}, failed ${w.failed}; WAL now ${w.log} frames`);
  process.stdout.write(`${out.join("\n")}\n`);
} finally {
  await journal.close();
  dir.dispose();
}
