// WAL checkpoints off the commit path (src/journal/sqlite/checkpointer.ts): a worker thread copies WAL
// frames into the database while appends keep committing, the writing connection restarts the WAL at
// `resetPages` so it stays bounded (at most twice `resetPages` plus one transaction's frames, with or
// without the worker), every acknowledged append is readable after reopening, and closing stops the
// worker before the writing connection closes, so the WAL is folded in and removed as before. The
// bound is the journal's own: a read transaction of another connection pins the WAL until it ends,
// and a checkpoint it stopped short is tried again, not counted as done.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { type WalCheckpointOptions, WalCheckpointer } from "../../src/journal/sqlite/checkpointer.js";
import { openWritable } from "../../src/journal/sqlite/open.js";
import { openSqlite } from "../../src/journal/sqlite-driver.js";
import { eventually } from "../fixtures/eventually.js";
import { inputEvent, outputEvent } from "./events.js";
import { created } from "./sessions.js";

const dirs: string[] = [];
const journals: SqliteJournal[] = [];
const holders: ChildProcess[] = [];
afterEach(async () => {
  for (const h of holders.splice(0)) h.kill();
  for (const j of journals.splice(0)) await j.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const SESSIONS = 12;

/** A journal with the sessions the tests append to (wal-0.., lone-1, lone-2) created. */
async function openAt(walCheckpoint: WalCheckpointOptions | false): Promise<{ journal: SqliteJournal; path: string }> {
  const dir = mkdtempSync(join(tmpdir(), "hh-wal-ckpt-"));
  dirs.push(dir);
  const path = join(dir, "journal.db");
  const journal = SqliteJournal.open(path, { walCheckpoint });
  journals.push(journal);
  await created(journal, ...Array.from({ length: SESSIONS }, (_, s) => `wal-${s}`), "lone-1", "lone-2");
  return { journal, path };
}

interface Observed {
  /** Every acknowledged append: session, seq, hash. */
  readonly acked: { session: string; seq: number; hash: string }[];
  /** Largest WAL seen after a round, in frames. */
  readonly maxLog: number;
  /** Largest growth of the WAL by one round (one group commit), in frames. */
  readonly maxGrowth: number;
}

/** `rounds` rounds (numbered from `from`), each one group commit of every session's two-event append. */
async function appendRounds(journal: SqliteJournal, rounds: number, from = 0): Promise<Observed> {
  const acked: Observed["acked"] = [];
  let maxLog = 0;
  let maxGrowth = 0;
  let prev = journal.walCheckpointStats.log;
  for (let r = from; r < from + rounds; r++) {
    const before = journal.groupCommitStats.batches;
    await Promise.all(
      Array.from({ length: SESSIONS }, async (_, s) => {
        const session = `wal-${s}`;
        const records = await journal.appendBatch(session, r * 2, 0, [
          inputEvent(`round ${r} ${"x".repeat(600)}`),
          outputEvent(`reply ${r} ${"y".repeat(600)}`),
        ]);
        for (const rec of records) acked.push({ session, seq: rec.seq, hash: rec.contentHash });
      }),
    );
    expect(journal.groupCommitStats.batches - before).toBe(1);
    const { log } = journal.walCheckpointStats;
    maxGrowth = Math.max(maxGrowth, log >= prev ? log - prev : log);
    maxLog = Math.max(maxLog, log);
    prev = log;
  }
  return { acked, maxLog, maxGrowth };
}

async function expectAllReadable(path: string, acked: Observed["acked"]): Promise<void> {
  const reopened = SqliteJournal.open(path);
  try {
    for (const a of acked) {
      const [record] = await reopened.readRange(a.session, a.seq, a.seq);
      expect(record?.contentHash, `${a.session}@${a.seq}`).toBe(a.hash);
    }
    for (let s = 0; s < SESSIONS; s++) expect(await reopened.verify(`wal-${s}`)).toMatchObject({ ok: true });
  } finally {
    await reopened.close();
  }
}

/** Another process holding the journal's WAL checkpoint lock (fixtures/hold-checkpoint-lock.py) until released. */
async function holdCheckpointLock(path: string): Promise<{ release(): Promise<void> }> {
  const child = spawn("python3", ["test/journal/fixtures/hold-checkpoint-lock.py", `${path}-shm`], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  holders.push(child);
  const lines = createInterface({ input: child.stdout });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      lines.once("line", resolve);
      child.once("exit", (code) => reject(new Error(`the lock holder exited (${code})`)));
    });
  expect(await next()).toBe("held");
  return {
    release: async () => {
      child.stdin.write("\n");
      expect(await next()).toBe("released");
    },
  };
}

describe("sqlite WAL checkpoints", () => {
  it("walCheckpointRunsOnTheWorker: frames are copied back by the worker, every acknowledged append readable after reopening", async () => {
    const { journal, path } = await openAt({ backgroundPages: 16, resetPages: 1_000_000 });
    const { acked } = await appendRounds(journal, 30);
    await eventually("a background checkpoint", () => journal.walCheckpointStats.background >= 1);
    const stats = journal.walCheckpointStats;
    expect(stats.inline).toBe(0);
    expect(stats.failed).toBe(0);
    // The worker copied frames this connection committed; none of its COMMITs checkpointed. (The WAL's
    // copied prefix at the end is no measure: a worker checkpoint that copied it all lets the next
    // commit restart the WAL, and the last round's frames may not be copied yet — it failed so.)
    expect(stats.backgroundFrames).toBeGreaterThan(0);
    await journal.close();
    await expectAllReadable(path, acked);
  });

  it("walStaysBounded: the writing connection restarts the WAL at resetPages, its file never holds more than twice that plus one commit", async () => {
    const resetPages = 48;
    const { journal, path } = await openAt({ backgroundPages: 16, resetPages });
    const { acked, maxLog, maxGrowth } = await appendRounds(journal, 60);
    expect(journal.walCheckpointStats.inline).toBeGreaterThan(0);
    expect(maxLog).toBeLessThanOrEqual(2 * resetPages + maxGrowth);
    const frameBytes = 4096 + 24;
    expect(statSync(`${path}-wal`).size).toBeLessThanOrEqual(32 + (2 * resetPages + maxGrowth) * frameBytes);
    await journal.close();
    await expectAllReadable(path, acked);
  });

  it("walStaysBoundedWhileTheWorkerStarts: a worker whose connection still holds its start-up read is waited for at twice resetPages, so the WAL restarts and holds at most twice resetPages plus one commit", async () => {
    // The interleaving walStaysBounded failed on under CPU load (maxLog 174 > 163): the worker thread,
    // slow to start, held the read snapshot of its first statement (the schema read) while the WAL
    // reached twice resetPages; the writer's checkpoint copied only up to that snapshot, SQLite still
    // said "not busy", and the WAL grew until the worker's read ended. Here the worker holds that read
    // open until the writer waits for it (or 20 s, so a writer that never waits cannot hang the test).
    const dir = mkdtempSync(join(tmpdir(), "hh-wal-start-"));
    dirs.push(dir);
    const path = join(dir, "journal.db");
    const { db } = openWritable(path, 20_000);
    const resetPages = 8;
    const signal = new Int32Array(new SharedArrayBuffer(4));
    const checkpointer = new WalCheckpointer(
      db,
      path,
      20_000,
      { backgroundPages: 4, resetPages },
      {
        signal: signal.buffer as SharedArrayBuffer,
        maxMs: 20_000,
      },
    );
    try {
      db.exec("CREATE TABLE filler (b BLOB)");
      const insert = db.prepare("INSERT INTO filler (b) VALUES (?)");
      const commit = db.transaction(() => {
        for (let i = 0; i < 3; i++) insert.run(randomBytes(3000));
      });
      let log = 0;
      const commitTwice = () => {
        commit();
        checkpointer.afterCommit(2);
        const next = checkpointer.walFrames().log;
        const growth = next >= log ? next - log : next;
        log = next;
        return growth;
      };
      // Commits until backgroundPages frames wait for a checkpoint: the worker is asked for one (and
      // starts), then holds its read.
      const waiting = () => log - checkpointer.walFrames().checkpointed;
      for (let i = 0; i < 10 && waiting() < 4; i++) commitTwice();
      expect(waiting()).toBeGreaterThanOrEqual(4);
      await eventually("the starting worker to hold a read snapshot", () => Atomics.load(signal, 0) === 1);
      let maxLog = 0;
      let maxGrowth = 0;
      for (let i = 0; i < 16; i++) {
        maxGrowth = Math.max(maxGrowth, commitTwice());
        maxLog = Math.max(maxLog, log);
      }
      expect(maxGrowth).toBeGreaterThan(0);
      // Without the wait the WAL held all 16 commits' frames, well past this.
      expect(maxLog).toBeLessThanOrEqual(2 * resetPages + maxGrowth);
      expect(checkpointer.stats).toMatchObject({ pinned: 0, lockBusy: 0 });
      expect(checkpointer.stats.inline).toBeGreaterThan(0);
    } finally {
      await checkpointer.close();
      db.close();
    }
  });

  it("aCheckpointAnotherConnectionsReaderStopsShortIsTriedAgainNotCountedDone: the WAL cannot restart under a reader, so the checkpoint that copied up to its snapshot counts as pinned and a timer tries it again once the reader ends, with no commit to prompt it", async () => {
    const resetPages = 16;
    // No worker checkpoint (backgroundPages out of reach): the restart is the writing connection's own.
    const { journal, path } = await openAt({ backgroundPages: 1_000_000, resetPages });
    const before = await appendRounds(journal, 1);
    const reader = openSqlite(path, { readonly: true, fileMustExist: true });
    try {
      reader.exec("BEGIN; SELECT count(*) FROM sqlite_schema;");
      const inlineBefore = journal.walCheckpointStats.inline;
      // Rounds past twice resetPages, where the writer checkpoints on every commit.
      const during: Observed["acked"] = [];
      let round = 1;
      for (let extra = 2; extra > 0 && round < 100; round++) {
        during.push(...(await appendRounds(journal, 1, round)).acked);
        if (journal.walCheckpointStats.log >= 2 * resetPages) extra -= 1;
      }
      let stats = journal.walCheckpointStats;
      expect(stats.pinned).toBeGreaterThanOrEqual(2);
      expect(stats.inline).toBe(inlineBefore);
      expect(stats.checkpointed).toBeLessThan(stats.log);
      reader.exec("COMMIT");
      await eventually("the pinned checkpoint to run once the reader ends", () => {
        return journal.walCheckpointStats.inline > inlineBefore;
      });
      stats = journal.walCheckpointStats;
      expect(stats.checkpointed).toBe(stats.log);
      const after = await appendRounds(journal, 1, round);
      // Restarted: the WAL now holds that one round only.
      expect(journal.walCheckpointStats.log).toBeLessThan(stats.log);
      await journal.close();
      await expectAllReadable(path, [...before.acked, ...during, ...after.acked]);
    } finally {
      reader.close();
    }
  });

  it("walStaysBoundedWithoutTheWorker: with no background checkpoint the inline one alone bounds the WAL", async () => {
    const resetPages = 48;
    const { journal, path } = await openAt({ backgroundPages: 1_000_000, resetPages });
    const { acked, maxLog, maxGrowth } = await appendRounds(journal, 40);
    const stats = journal.walCheckpointStats;
    expect(stats.background).toBe(0);
    expect(stats.inline).toBeGreaterThan(0);
    expect(maxLog).toBeLessThanOrEqual(resetPages + maxGrowth);
    await journal.close();
    await expectAllReadable(path, acked);
  });

  it("walCheckpointCloseFoldsTheWal: close stops the worker first, so the last connection checkpoints and removes the WAL", async () => {
    const { journal, path } = await openAt({ backgroundPages: 8 });
    await appendRounds(journal, 10);
    await eventually("a background checkpoint", () => journal.walCheckpointStats.background >= 1);
    await journal.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it("closingAJournalWithItsWorkerRunningFinishesBeforeTheProcessExits: the awaited close keeps the process alive (no exit 13 for an unsettled top-level await)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-wal-close-"));
    dirs.push(dir);
    const path = join(dir, "journal.db");
    const { code, out, err } = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = spawn(process.execPath, ["--import", "tsx", "test/journal/fixtures/close-with-worker.ts", path], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      child.once("exit", (c) => resolve({ code: c, out, err }));
    });
    expect(code, err).toBe(0);
    expect(out).toBe("closed\n");
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it("walCheckpointFalseStartsNoWorker: SQLite's own auto-checkpoint bounds the WAL, no worker checkpoint runs, every acknowledged append reads back", async () => {
    const { journal, path } = await openAt(false);
    const wal = `${path}-wal`;
    // ~12 MiB of events, several times SQLite's 1000-page auto-checkpoint: with no checkpoint at all the
    // WAL file would hold them all; with the worker (the option ignored) it would count its runs.
    const payload = "z".repeat(8000);
    const acked: Observed["acked"] = [];
    let written = 0;
    let maxGrowth = 0;
    let prevSize = 0;
    for (let r = 0; r < 64; r++) {
      await Promise.all(
        Array.from({ length: SESSIONS }, async (_, s) => {
          const session = `wal-${s}`;
          const records = await journal.appendBatch(session, r * 2, 0, [
            inputEvent(`round ${r} ${payload}`),
            outputEvent(`reply ${r} ${payload}`),
          ]);
          for (const rec of records) acked.push({ session, seq: rec.seq, hash: rec.contentHash });
        }),
      );
      written += SESSIONS * 2 * payload.length;
      const size = statSync(wal).size;
      maxGrowth = Math.max(maxGrowth, size - prevSize);
      prevSize = size;
    }
    const bound = 32 + (1000 + 1) * (4096 + 24) + maxGrowth;
    expect(written).toBeGreaterThan(2 * bound);
    expect(statSync(wal).size).toBeLessThanOrEqual(bound);
    expect(journal.walCheckpointStats).toMatchObject({ background: 0, inline: 0, failed: 0 });
    await journal.close();
    await expectAllReadable(path, acked);
  });

  it("aCheckpointLockHeldByAnotherProcessIsTriedAgainLaterNotWaitedForOnTheEventLoop: each commit past resetPages tries once and goes on; the checkpoint runs once the lock is free, with no commit to prompt it", async () => {
    const resetPages = 16;
    // No worker checkpoint (backgroundPages out of reach): the restart is the writing connection's own.
    const { journal, path } = await openAt({ backgroundPages: 1_000_000, resetPages });
    const before = await appendRounds(journal, 1);
    const holder = await holdCheckpointLock(path);
    const inlineBefore = journal.walCheckpointStats.inline;
    // Rounds until the WAL is past resetPages, then two more: every one of those commits wants the restart.
    const during: Observed["acked"] = [];
    let round = 1;
    for (let extra = 2; extra > 0 && round < 100; round++) {
      during.push(...(await appendRounds(journal, 1, round)).acked);
      if (journal.walCheckpointStats.log >= resetPages) extra -= 1;
    }
    expect(journal.walCheckpointStats.log).toBeGreaterThanOrEqual(resetPages);
    expect(journal.walCheckpointStats.inline).toBe(inlineBefore);
    await holder.release();
    // Before: the commit slept in 2 ms steps on the event loop until busyTimeoutMs and gave up until the
    // next commit. Now: a timer tries again, so the checkpoint runs with no further append.
    await eventually(
      "the refused checkpoint to run once the lock is free",
      () => journal.walCheckpointStats.inline > inlineBefore,
    );
    const stats = journal.walCheckpointStats;
    expect(stats.lockBusy).toBeGreaterThanOrEqual(1);
    // The checkpoint copied every frame, so the next transaction restarts the WAL from the start.
    expect(stats.log).toBeGreaterThan(0);
    expect(stats.checkpointed).toBe(stats.log);
    const after = await appendRounds(journal, 1, round);
    // Restarted: the WAL now holds that one round only (several rounds were in it before).
    expect(journal.walCheckpointStats.log).toBeLessThan(stats.log);
    await journal.close();
    await expectAllReadable(path, [...before.acked, ...during, ...after.acked]);
  });

  it("aLoneWriterLeavesCheckpointsToSqliteAndGroupedCommitsHandThemToTheWorker: one session appending alone starts no worker and its WAL stays within backgroundPages plus a commit; commits of several writes switch to the worker; loneCommits one-write commits switch back", async () => {
    const backgroundPages = 16;
    const { journal, path } = await openAt({ backgroundPages, resetPages: 48, loneCommits: 8 });
    const acked: Observed["acked"] = [];
    let maxLog = 0;
    let maxGrowth = 0;
    let prev = 0;
    const lone = async (session: string, count: number) => {
      for (let i = 0; i < count; i++) {
        const [rec] = await journal.appendBatch(session, i, 0, [inputEvent(`alone ${i} ${"x".repeat(1500)}`)]);
        if (rec !== undefined) acked.push({ session, seq: rec.seq, hash: rec.contentHash });
        const { log } = journal.walCheckpointStats;
        maxGrowth = Math.max(maxGrowth, log >= prev ? log - prev : log);
        maxLog = Math.max(maxLog, log);
        prev = log;
      }
    };
    await lone("lone-1", 80);
    let stats = journal.walCheckpointStats;
    expect(stats).toMatchObject({ concurrent: false, concurrentSpells: 0, background: 0, inline: 0 });
    expect(maxLog).toBeGreaterThan(0);
    expect(maxLog).toBeLessThanOrEqual(backgroundPages + maxGrowth);
    const grouped = await appendRounds(journal, 20);
    expect(journal.walCheckpointStats).toMatchObject({ concurrent: true, concurrentSpells: 1 });
    await eventually("a background checkpoint", () => journal.walCheckpointStats.background >= 1);
    await lone("lone-2", 8);
    stats = journal.walCheckpointStats;
    expect(stats).toMatchObject({ concurrent: false, concurrentSpells: 1 });
    await journal.close();
    await expectAllReadable(path, [...acked, ...grouped.acked]);
  });
});
