// WAL checkpoints off the commit path. Invariant: the writing connection never lets SQLite checkpoint
// inside a COMMIT (wal_autocheckpoint is 0); a second connection on a worker thread copies WAL frames
// back into the database file while appends keep committing, and the WAL stays bounded — once it holds
// `resetPages` frames the writing connection finishes the checkpoint itself (only the frames the worker
// has not copied yet; past twice `resetPages` it waits for a worker checkpoint in progress), so its next
// transaction restarts the WAL from the start. Durability never depends on a checkpoint: a write is durable at its COMMIT's
// fsync of the WAL; a checkpoint only moves committed pages, and a crash in the middle of one is
// recovered by SQLite from the WAL on the next open.
//
// Why a worker: SQLite's own auto-checkpoint (1000 pages) runs inside the COMMIT that crosses the
// threshold, on the event loop, so every appender waiting for that batch also waits for the copy and
// the database file's fsync (bench/profile/group-commit-batches.ts: ~1 batch in 8 under 100 sessions,
// each ~3× a plain commit). The worker does that copy and fsync in parallel with the next commits.
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type BetterSqlite3 from "better-sqlite3";

export interface WalCheckpointOptions {
  /**
   * WAL frames not yet copied into the database that start a background checkpoint on the worker
   * (default 1000, SQLite's own auto-checkpoint threshold).
   */
  readonly backgroundPages?: number;
  /**
   * WAL frames at which the writing connection checkpoints inline after its commit, so the WAL restarts
   * (default 4000: 16 MiB at 4 KiB pages). Under a steady stream of commits the worker rarely finds
   * the WAL fully copied between two transactions, which a restart needs; this bounds the WAL anyway:
   * it holds at most twice `resetPages` plus one transaction's frames.
   */
  readonly resetPages?: number;
}

export const DEFAULT_BACKGROUND_PAGES = 1000;
export const DEFAULT_RESET_PAGES = 4000;

interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

// The worker: one connection that only ever runs PASSIVE checkpoints (it never writes a page of its
// own and holds no transaction between messages). `flag[0]` is 1 while a checkpoint runs, so the
// writing connection can wait for it instead of finding the checkpoint lock busy.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const flag = new Int32Array(workerData.flag);
const db = new Database(workerData.path, { fileMustExist: true, timeout: 0 });
db.pragma("synchronous = FULL");
parentPort.on("message", (m) => {
  if (m === "close") {
    db.close();
    parentPort.close();
    return;
  }
  Atomics.store(flag, 0, 1);
  try {
    const [row] = db.pragma("wal_checkpoint(PASSIVE)");
    parentPort.postMessage({ ok: true, log: row.log, checkpointed: row.checkpointed });
  } catch (err) {
    parentPort.postMessage({ ok: false, error: String((err && err.message) || err) });
  } finally {
    Atomics.store(flag, 0, 0);
    Atomics.notify(flag, 0);
  }
});
`;

/** Counters for tests and bench/ (never for correctness). */
export interface CheckpointStats {
  /** Checkpoints the worker finished. */
  background: number;
  /** Checkpoints the writing connection ran after a commit (the WAL reached `resetPages`). */
  inline: number;
  /** Worker checkpoints that failed (the inline checkpoint still bounds the WAL). */
  failed: number;
}

export class WalCheckpointer {
  readonly stats: CheckpointStats = { background: 0, inline: 0, failed: 0 };
  private worker: Worker | undefined;
  /** Resolves when the worker thread has exited (set when it is spawned). */
  private exited: Promise<void> | undefined;
  private inFlight = false;
  private closed = false;
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  private readonly sleep = new Int32Array(new SharedArrayBuffer(4));
  private readonly backgroundPages: number;
  private readonly resetPages: number;
  /** Prepared once: afterCommit reads the WAL's frames after every commit. */
  private readonly noop: BetterSqlite3.Statement<[], CheckpointRow>;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly path: string,
    private readonly waitMs: number,
    opts: WalCheckpointOptions = {},
  ) {
    this.backgroundPages = opts.backgroundPages ?? DEFAULT_BACKGROUND_PAGES;
    this.resetPages = opts.resetPages ?? DEFAULT_RESET_PAGES;
    db.pragma("wal_autocheckpoint = 0");
    this.noop = db.prepare<[], CheckpointRow>("PRAGMA wal_checkpoint(NOOP)");
  }

  /** Frames in the WAL and frames already copied into the database; reads shared memory, no lock. */
  walFrames(): { log: number; checkpointed: number } {
    const row = this.noop.get();
    return { log: row?.log ?? 0, checkpointed: row?.checkpointed ?? 0 };
  }

  /** After every committed write transaction of the writing connection. */
  afterCommit(): void {
    if (this.closed) return;
    const { log, checkpointed } = this.walFrames();
    const left = log - checkpointed;
    // Past `resetPages` the worker is asked to catch up, and the writing connection copies what is left
    // itself once that is little (a quarter of `backgroundPages`: about the frames committed while the
    // worker copied), so the inline part stays small; at twice `resetPages` it copies whatever is left,
    // waiting for a worker checkpoint in progress.
    if (log >= 2 * this.resetPages || (log >= this.resetPages && !this.inFlight && left <= this.backgroundPages / 4)) {
      this.checkpointInline();
      return;
    }
    if (!this.inFlight && (left >= this.backgroundPages || (log >= this.resetPages && left > 0)))
      this.startBackground();
  }

  /** Stops the worker (its connection closes first, so the writing connection closes last). */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    if (worker === undefined) return;
    // The worker is unref'd so it never keeps a process alive, but a close that awaits its exit must:
    // otherwise a process with nothing else pending ends mid-close (exit 13, unsettled await).
    worker.ref();
    worker.postMessage("close");
    await this.exited;
  }

  private checkpointInline(): void {
    // A checkpoint holds SQLite's checkpoint lock, so a second one finds it busy and copies nothing:
    // wait for the worker's to end (it is copying the same frames), then copy what is left.
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const [row] = this.db.pragma("wal_checkpoint(PASSIVE)") as CheckpointRow[];
      if (row === undefined || row.busy === 0) break;
      const left = deadline - Date.now();
      if (left <= 0) return;
      // Another connection's checkpoint (not the worker's) is waited out in short sleeps.
      if (Atomics.wait(this.flag, 0, 1, left) === "not-equal") Atomics.wait(this.sleep, 0, 0, Math.min(left, 2));
    }
    this.stats.inline += 1;
  }

  private startBackground(): void {
    const worker = this.worker ?? this.spawn();
    if (worker === undefined) return;
    this.inFlight = true;
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
        },
      });
      // The worker never keeps the process alive: a process that exits without closing the journal
      // loses no committed write (SQLite recovers the WAL on the next open).
      worker.unref();
      this.exited = new Promise((resolve) => worker.once("exit", () => resolve()));
      worker.on("message", (m: unknown) => {
        this.inFlight = false;
        if (typeof m === "object" && m !== null && (m as { ok?: unknown }).ok === true) this.stats.background += 1;
        else this.stats.failed += 1;
      });
      const lose = () => {
        // A lost worker: the inline checkpoint at `resetPages` keeps the WAL bounded without it.
        this.inFlight = true;
        this.worker = undefined;
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
      return undefined;
    }
  }
}
