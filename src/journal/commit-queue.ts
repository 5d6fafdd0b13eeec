// Group commit: the per-journal queue that lets appends from different sessions which arrive together
// share one transaction and one fsync. Invariant: every queued write settles exactly once — resolved
// only after the batch carrying it has committed durably, or rejected with its own error (a write
// that fails inside a batch fails alone; a batch that cannot commit rejects every write in it) — and
// batches run one at a time in arrival order, so writes to one session commit in the order they were
// queued and the per-session CAS and fence checks see exactly what sequential calls would see.
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import type { FencedAppend, JournalRecord } from "./types.js";

/** `append` / `appendBatch`: chained onto the head under the caller's fence. */
export interface AppendWrite {
  readonly kind: "append";
  readonly session: string;
  readonly expectedLastSeq: number;
  readonly fence: number;
  readonly events: readonly Event[];
}

/** `appendUnderNewFence`: a fence minted in the same transaction, optionally a checkpoint row. */
export interface FencedWrite {
  readonly kind: "fenced";
  readonly session: string;
  readonly expectedLastSeq: number;
  readonly events: readonly Event[];
  readonly checkpointDigest: string | undefined;
}

export type QueuedWrite = AppendWrite | FencedWrite;

/** What a batch reports per write, in the batch's order. */
export type WriteOutcome =
  | { readonly ok: true; readonly fence: number; readonly records: JournalRecord[] }
  | { readonly ok: false; readonly error: unknown };

/**
 * Commits a batch: one transaction for all writes that succeed, each failing write rolled back alone.
 * Returns one outcome per write, in order, only after the commit is durable; throws when the batch as
 * a whole could not commit (then no write in it is durable).
 */
export type BatchRunner = (writes: readonly QueuedWrite[]) => WriteOutcome[] | Promise<WriteOutcome[]>;

export interface GroupCommitOptions {
  /**
   * Most writes per transaction (default 256). Bounds the time one commit holds the writer lock and
   * the latency of the last write in a burst; a larger burst is committed as several transactions.
   */
  readonly maxBatch?: number;
}

export const DEFAULT_MAX_BATCH = 256;

interface Entry {
  readonly write: QueuedWrite;
  settle(outcome: WriteOutcome): void;
}

export class CommitQueue {
  private pending: Entry[] = [];
  private scheduled = false;
  private running: Promise<void> | undefined;
  private readonly maxBatch: number;
  /** Batches committed and writes carried, for diagnostics and bench/ (never for correctness). */
  readonly stats = { batches: 0, writes: 0 };

  constructor(
    private readonly runBatch: BatchRunner,
    opts: GroupCommitOptions = {},
  ) {
    this.maxBatch = opts.maxBatch ?? DEFAULT_MAX_BATCH;
  }

  append(write: AppendWrite): Promise<JournalRecord[]> {
    return new Promise((resolve, reject) => {
      this.push({ write, settle: (o) => (o.ok ? resolve(o.records) : reject(o.error)) });
    });
  }

  appendUnderNewFence(write: FencedWrite): Promise<FencedAppend> {
    return new Promise((resolve, reject) => {
      this.push({
        write,
        settle: (o) => (o.ok ? resolve({ fence: o.fence, records: o.records }) : reject(o.error)),
      });
    });
  }

  /** Writes queued and not yet handed to a batch. */
  get size(): number {
    return this.pending.length;
  }

  /**
   * For a synchronous runner only (SQLite): commits everything queued now, before the caller's own
   * write, so a journal's writes stay in the order its caller issued them.
   */
  drainSync(): void {
    while (this.pending.length > 0) {
      const outcome = this.runNext();
      if (outcome instanceof Promise) throw new Error("drainSync needs a synchronous batch runner");
    }
  }

  /** Resolves once every write queued so far has settled. */
  async drain(): Promise<void> {
    while (this.pending.length > 0 || this.running !== undefined) {
      if (this.running !== undefined) await this.running;
      else await this.flush();
    }
  }

  private push(entry: Entry): void {
    this.pending.push(entry);
    if (this.scheduled) return;
    this.scheduled = true;
    // The window: every write that arrives before the event loop's check phase — this callback, its
    // microtasks and every I/O callback of the same poll — joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.running !== undefined) return; // the running batch flushes the rest when it ends
    while (this.pending.length > 0) {
      const step = this.runNext();
      if (step instanceof Promise) {
        this.running = step;
        try {
          await step;
        } finally {
          this.running = undefined;
        }
      }
    }
  }

  /** Takes the next batch and runs it; settles its writes (synchronously when the runner is). */
  private runNext(): void | Promise<void> {
    const batch = this.pending.splice(0, this.maxBatch);
    const settleAll = (outcomes: readonly WriteOutcome[]): void => {
      this.stats.batches += 1;
      this.stats.writes += batch.length;
      batch.forEach((entry, i) => {
        const outcome = outcomes[i];
        entry.settle(outcome ?? { ok: false, error: new Error("group commit returned no outcome for a write") });
      });
    };
    const failAll = (error: unknown): void => {
      for (const entry of batch) entry.settle({ ok: false, error });
    };
    let result: WriteOutcome[] | Promise<WriteOutcome[]>;
    try {
      result = this.runBatch(batch.map((e) => e.write));
    } catch (err) {
      failAll(err);
      return;
    }
    if (result instanceof Promise) return result.then(settleAll, failAll);
    settleAll(result);
  }
}
