// WAL checkpoints, adapted to how the journal is written. Invariant: the writing connection never
// sleeps on the event loop for a checkpoint lock — another connection's lock is never waited for (the
// checkpoint it refused is tried again on the next commit or on a timer, until it has run) — and the
// WAL stays bounded: past twice `resetPages` the writer waits for its own worker's use of the database
// to end (woken by the worker the moment it does, not by polling), then copies what is left. The
// worker's connection and the writer's inline checkpoint exclude each other through one shared word,
// so the worker never holds a read snapshot (its start-up schema read included) nor the checkpoint
// lock while that checkpoint runs. Only a reader on some other connection (a backup in another
// process) can still pin the WAL: a checkpoint it stopped short is not counted as done but tried again,
// and the WAL restarts once that reader ends (docs/operations.md, "WAL size"). Durability never depends on a
// checkpoint: a write is durable at its COMMIT's fsync of the WAL; a checkpoint only moves committed
// pages, and a crash in the middle of one is recovered by SQLite from the WAL on the next open.
//
// Two modes, switched by the commits themselves:
// - lone (from open, and after `loneCommits` commits in a row of one write each): SQLite's own
//   auto-checkpoint (PASSIVE, inside the COMMIT that makes the WAL reach `backgroundPages`; it skips,
//   never waits, when the lock is held), exactly the path before the worker existed. One writer gains
//   nothing from a worker: bench/profile/checkpointer-single.ts measured the worker's arrangement at
//   ~0.6× the appends/s of this one for a lone writer (issue 44; docs/performance.md, note on
//   journal_append_ratio): its WAL grows to 4000 frames before it restarts instead of 1000, so four
//   times as many commits extend the -wal file (an fsync that also commits the file's new size), and
//   each commit paid a `wal_checkpoint(NOOP)` read.
// - concurrent (from the first commit that carries several writes, i.e. group commit under load):
//   `wal_autocheckpoint = 0`; a second connection on a worker thread copies WAL frames back into the
//   database while appends keep committing, and once the WAL holds `resetPages` frames the writing
//   connection finishes the checkpoint itself (only the frames the worker has not copied), so its next
//   transaction restarts the WAL from the start. SQLite's auto-checkpoint would run inside the COMMIT
//   that crosses the threshold, on the event loop, so every appender waiting for that batch would also
//   wait for the copy and the database file's fsync (bench/profile/group-commit-batches.ts: ~1 batch
//   in 8 under 100 sessions, each ~3× a plain commit); the worker does that in parallel.
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type BetterSqlite3 from "better-sqlite3";

export interface WalCheckpointOptions {
  /**
   * WAL frames not yet copied into the database that start a checkpoint (default 1000, SQLite's own
   * auto-checkpoint threshold): inline by SQLite in lone mode, on the worker in concurrent mode.
   */
  readonly backgroundPages?: number;
  /**
   * Concurrent mode: WAL frames at which the writing connection checkpoints after its commit, so the WAL
   * restarts (default 4000: 16 MiB at 4 KiB pages). Under a steady stream of commits the worker rarely
   * finds the WAL fully copied between two transactions, which a restart needs; this bounds the WAL
   * anyway: it holds at most twice `resetPages` plus one transaction's frames.
   */
  readonly resetPages?: number;
  /**
   * Commits in a row that carry one write each after which concurrent mode ends and SQLite's own
   * auto-checkpoint takes over again (default 64: well past the gaps between batches under load, so
   * the mode does not flap; a lone writer's first 64 commits after a burst still use the worker).
   */
  readonly loneCommits?: number;
}

export const DEFAULT_BACKGROUND_PAGES = 1000;
export const DEFAULT_RESET_PAGES = 4000;
export const DEFAULT_LONE_COMMITS = 64;
/** First and longest pause before trying again a checkpoint another connection's lock refused (ms). */
const RETRY_FIRST_MS = 5;
const RETRY_MAX_MS = 250;

/** Tests only: hold the worker's start-up read open (see `WalCheckpointer`'s constructor). */
export interface WorkerStartHold {
  /** The worker sets word 0 to 1 once its connection holds a read snapshot (and notifies). */
  readonly signal: SharedArrayBuffer;
  /** Longest hold (ms), so a writer that never waits cannot hang the worker. */
  readonly maxMs: number;
}

interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

// The worker: one connection that only ever runs PASSIVE checkpoints (it never writes a page of its
// own and holds no transaction between messages). \`flag[0]\` is the lock the worker and the writing
// connection's inline checkpoint share: 0 free, 1 the worker's connection is using the database (its
// start-up — opening and the schema read its first statement makes — or a checkpoint), 2 the writing
// connection checkpoints. Each side waits for the other with Atomics.wait, woken by the release.
// \`flag[1]\` is 1 while the writing connection waits (read by the tests' start-up hold only).
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const flag = new Int32Array(workerData.flag);
function acquire() {
  for (;;) {
    const was = Atomics.compareExchange(flag, 0, 0, 1);
    if (was === 0) return;
    Atomics.wait(flag, 0, was);
  }
}
function release() {
  Atomics.store(flag, 0, 0);
  Atomics.notify(flag, 0);
}
// The start-up reads the schema (a read transaction): under the lock, like a checkpoint, so a writer
// restarting the WAL waits for it instead of checkpointing short of its snapshot.
let db;
acquire();
try {
  db = new Database(workerData.path, { fileMustExist: true, timeout: 0 });
  db.exec("PRAGMA synchronous = FULL");
  if (workerData.hold) {
    // Tests only: keep a read snapshot open until the writing connection waits for this worker.
    const signal = new Int32Array(workerData.hold.signal);
    db.exec("BEGIN; SELECT count(*) FROM sqlite_schema;");
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
    Atomics.wait(flag, 1, 0, workerData.hold.maxMs);
    db.exec("COMMIT");
  }
} finally {
  release();
}
// One statement for the worker's life: a statement left to the garbage collector can abort the
// process on Node 24 (sqlite-driver.ts says why); this one and db are freed with the worker. It is
// prepared at the first checkpoint, not at start: prepared at start, the worker's first checkpoint
// sometimes copied no frame (walCheckpointRunsOnTheWorker failed 2 runs in 6; 12 in 12 pass this way).
let passive;
parentPort.on("message", (m) => {
  if (m === "close") {
    db.close();
    parentPort.close();
    return;
  }
  let report;
  acquire();
  try {
    passive ??= db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
    const row = passive.get();
    report = { ok: true, busy: row.busy, log: row.log, checkpointed: row.checkpointed };
  } catch (err) {
    report = { ok: false, error: String((err && err.message) || err) };
  } finally {
    release();
  }
  // Released first: the writer acting on this report finds the lock free.
  parentPort.postMessage(report);
});
`;

/** Frames a worker checkpoint copied: its report against the WAL at its request; 0 after a restart. */
function framesCopied(at: { log: number; checkpointed: number }, report: Partial<CheckpointRow>): number {
  const { log, checkpointed } = report;
  if (typeof log !== "number" || typeof checkpointed !== "number") return 0;
  if (log < at.log || checkpointed < at.checkpointed) return 0;
  return checkpointed - at.checkpointed;
}

/** Counters for tests and bench/ (never for correctness). */
export interface CheckpointStats {
  /** Checkpoints the worker finished. */
  background: number;
  /** Checkpoints the writing connection ran in concurrent mode (the WAL reached `resetPages`). */
  inline: number;
  /**
   * WAL frames the worker's checkpoints copied: each report's copied prefix less the one at its request
   * (none when the WAL restarted in between, so frames the writer copied are never counted).
   */
  backgroundFrames: number;
  /** Worker checkpoints that failed (the inline checkpoint still bounds the WAL). */
  failed: number;
  /**
   * Inline checkpoints that did not run: the checkpoint lock was held by another connection, or (past
   * twice `resetPages`) the worker kept the database longer than the busy timeout. Tried again later.
   */
  lockBusy: number;
  /**
   * Inline checkpoints that stopped short of the WAL's end: another connection's read transaction still
   * needs older frames, so the WAL cannot restart yet. Not counted in `inline`; tried again later.
   */
  pinned: number;
  /** Times the checkpointer entered concurrent mode. */
  concurrentSpells: number;
}

/** Every counter at zero (a journal without a checkpointer reports these). */
export function noCheckpoints(): CheckpointStats {
  return { background: 0, inline: 0, backgroundFrames: 0, failed: 0, lockBusy: 0, pinned: 0, concurrentSpells: 0 };
}

export class WalCheckpointer {
  readonly stats: CheckpointStats = noCheckpoints();
  private worker: Worker | undefined;
  /** Resolves when the worker thread has exited (set when it is spawned). */
  private exited: Promise<void> | undefined;
  private inFlight = false;
  /** The WAL when the worker's checkpoint in flight was asked for (for `stats.backgroundFrames`). */
  private requestedAt = { log: 0, checkpointed: 0 };
  /** The worker died or failed to start: it is not started again (the inline checkpoint bounds the WAL). */
  private lost = false;
  private closed = false;
  /** Concurrent mode (see the module comment); false: SQLite's auto-checkpoint. */
  private concurrent = false;
  /** One-write commits in a row while concurrent. */
  private loneInARow = 0;
  /** An inline checkpoint is due and was refused (or deferred to the worker's report). */
  private resetWanted = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = RETRY_FIRST_MS;
  /** [0]: the lock shared with the worker (WORKER_SOURCE says how); [1]: 1 while the writer waits for it. */
  private readonly flag = new Int32Array(new SharedArrayBuffer(8));
  private readonly backgroundPages: number;
  private readonly resetPages: number;
  private readonly loneCommits: number;
  /** Prepared once: afterCommit reads the WAL's frames after every concurrent-mode commit. */
  private readonly noop: BetterSqlite3.Statement<[], CheckpointRow>;
  private readonly passive: BetterSqlite3.Statement<[], CheckpointRow>;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly path: string,
    /** Longest wait past twice `resetPages` for the worker's use of the database to end (the busy timeout). */
    private readonly waitMs: number,
    opts: WalCheckpointOptions = {},
    /** Tests only: the worker keeps a read snapshot open at start-up until the writer waits for it. */
    private readonly hold?: WorkerStartHold,
  ) {
    this.backgroundPages = opts.backgroundPages ?? DEFAULT_BACKGROUND_PAGES;
    this.resetPages = opts.resetPages ?? DEFAULT_RESET_PAGES;
    this.loneCommits = opts.loneCommits ?? DEFAULT_LONE_COMMITS;
    this.noop = db.prepare<[], CheckpointRow>("PRAGMA wal_checkpoint(NOOP)");
    this.passive = db.prepare<[], CheckpointRow>("PRAGMA wal_checkpoint(PASSIVE)");
    db.pragma(`wal_autocheckpoint = ${this.backgroundPages}`);
  }

  /** Frames in the WAL and frames already copied into the database; reads shared memory, no lock. */
  walFrames(): { log: number; checkpointed: number } {
    const row = this.noop.get();
    return { log: row?.log ?? 0, checkpointed: row?.checkpointed ?? 0 };
  }

  /** True while commits are concurrent (the worker's mode). */
  get isConcurrent(): boolean {
    return this.concurrent;
  }

  /** After every committed write transaction of the writing connection; `writes`: the writes it carried. */
  afterCommit(writes: number): void {
    if (this.closed) return;
    if (writes > 1) {
      this.loneInARow = 0;
      if (!this.concurrent) this.setConcurrent(true);
    } else if (this.concurrent && ++this.loneInARow >= this.loneCommits) {
      this.setConcurrent(false);
    }
    if (!this.concurrent) return;
    const { log, checkpointed } = this.walFrames();
    const left = log - checkpointed;
    // Past `resetPages` the worker is asked to catch up, and the writing connection copies what is left
    // itself once that is little (a quarter of `backgroundPages`: about the frames committed while the
    // worker copied), so the inline part stays small; at twice `resetPages` it copies whatever is left,
    // waiting for a worker checkpoint in progress.
    if (log >= 2 * this.resetPages || (log >= this.resetPages && !this.inFlight && left <= this.backgroundPages / 4)) {
      this.resetWanted = true;
      this.checkpointInline(log >= 2 * this.resetPages);
      return;
    }
    if (!this.inFlight && (left >= this.backgroundPages || (log >= this.resetPages && left > 0)))
      this.startBackground(log, checkpointed);
  }

  /** Stops the worker (its connection closes first, so the writing connection closes last). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const worker = this.worker;
    this.worker = undefined;
    if (worker === undefined) return;
    // The worker is unref'd so it never keeps a process alive, but a close that awaits its exit must:
    // otherwise a process with nothing else pending ends mid-close (exit 13, unsettled await).
    worker.ref();
    worker.postMessage("close");
    await this.exited;
  }

  private setConcurrent(on: boolean): void {
    this.concurrent = on;
    this.loneInARow = 0;
    if (on) this.stats.concurrentSpells += 1;
    // Lone: SQLite checkpoints inside the COMMIT that crosses `backgroundPages` (skipping while the lock
    // is held, as the worker's may be); concurrent: never inside a COMMIT.
    this.db.pragma(`wal_autocheckpoint = ${on ? 0 : this.backgroundPages}`);
    if (!on) this.resetWanted = false;
  }

  /**
   * One PASSIVE checkpoint on the writing connection, tried once, holding the lock shared with the
   * worker. The worker's use of the database (a checkpoint, or its start-up read) is waited for only
   * when `waitForWorker` (the WAL is past twice `resetPages`), else its report tries again; a lock or a
   * reader of another connection is never waited for: a timer tries again.
   */
  private checkpointInline(waitForWorker: boolean): void {
    if (this.closed || !this.db.open) return;
    const locked = this.lockOutWorker(waitForWorker);
    if (locked === "worker") return;
    if (locked === "timeout") {
      this.stats.lockBusy += 1;
      return; // the worker's report tries again (it is in flight: only then does it hold the lock)
    }
    let row: CheckpointRow | undefined;
    try {
      row = this.passive.get();
    } finally {
      Atomics.store(this.flag, 0, 0);
      Atomics.notify(this.flag, 0);
    }
    if (row === undefined || row.busy !== 0) {
      this.stats.lockBusy += 1;
    } else if (row.checkpointed < row.log) {
      // SQLite reports a PASSIVE checkpoint that a reader stopped short as not busy; the WAL restarts
      // only once every frame is copied, so this one is not done.
      this.stats.pinned += 1;
    } else {
      this.stats.inline += 1;
      this.resetWanted = false;
      this.retryMs = RETRY_FIRST_MS;
      return;
    }
    if (!this.inFlight) this.retryLater();
  }

  /**
   * Takes the lock shared with the worker (flag[0] 0 → 2). When the worker holds it: "worker" at once,
   * or with `wait`, waits up to the busy timeout (woken by the worker's release), then "timeout".
   */
  private lockOutWorker(wait: boolean): "locked" | "worker" | "timeout" {
    const deadline = performance.now() + this.waitMs;
    for (;;) {
      const was = Atomics.compareExchange(this.flag, 0, 0, 2);
      if (was === 0) return "locked";
      if (!wait) return "worker";
      const left = deadline - performance.now();
      if (left <= 0) return "timeout";
      Atomics.store(this.flag, 1, 1);
      Atomics.notify(this.flag, 1);
      Atomics.wait(this.flag, 0, was, left);
      Atomics.store(this.flag, 1, 0);
    }
  }

  /** Tries the wanted checkpoint again after a pause (doubling, at most RETRY_MAX_MS), off any commit. */
  private retryLater(): void {
    if (this.retryTimer !== undefined) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.resetWanted && !this.inFlight && this.concurrent) this.checkpointInline(false);
    }, delay);
    this.retryTimer.unref();
  }

  private startBackground(log: number, checkpointed: number): void {
    if (this.lost) return;
    const worker = this.worker ?? this.spawn();
    if (worker === undefined) return;
    this.inFlight = true;
    this.requestedAt = { log, checkpointed };
    worker.postMessage("checkpoint");
  }

  private spawn(): Worker | undefined {
    try {
      const worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          driver: createRequire(import.meta.url).resolve("better-sqlite3"),
          path: this.path,
          flag: this.flag.buffer,
          hold: this.hold,
        },
      });
      // The worker never keeps the process alive: a process that exits without closing the journal
      // loses no committed write (SQLite recovers the WAL on the next open).
      worker.unref();
      this.exited = new Promise((resolve) => worker.once("exit", () => resolve()));
      worker.on("message", (m: unknown) => {
        this.inFlight = false;
        if (typeof m === "object" && m !== null && (m as { ok?: unknown }).ok === true) {
          this.stats.background += 1;
          this.stats.backgroundFrames += framesCopied(this.requestedAt, m as Partial<CheckpointRow>);
        } else this.stats.failed += 1;
        // A restart that waited for this checkpoint: copy what is left now.
        if (this.resetWanted && this.concurrent) this.checkpointInline(false);
      });
      const lose = () => {
        // A lost worker: the inline checkpoint at `resetPages` keeps the WAL bounded without it. A
        // thread that died holding the lock never releases it.
        Atomics.compareExchange(this.flag, 0, 1, 0);
        this.inFlight = false;
        this.lost = true;
        this.worker = undefined;
        if (this.resetWanted && this.concurrent) this.checkpointInline(false);
      };
      worker.on("error", () => {
        this.stats.failed += 1;
        lose();
      });
      worker.once("exit", lose);
      this.worker = worker;
      return worker;
    } catch {
      this.stats.failed += 1;
      this.lost = true;
      return undefined;
    }
  }
}
