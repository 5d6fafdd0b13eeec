// The PostgreSQL journal's append path: appends and fenced appends through the commit queue, each batch
// written first optimistically for sessions whose head this journal remembers, the rest in one locking
// transaction (batch.ts). Invariants: a session's writes take one path in a batch, so their order holds;
// a batch that fails as a whole is retried one write per transaction, so only the write that broke it
// fails; and a session this process holds locked learns the head it committed, or forgets what it
// knew when a write failed (the stored session is then not what this host thought).
import type pg from "pg";
import {
  CommitQueue,
  type AppendWrite,
  type FencedWrite,
  type GroupCommitOptions,
  type QueuedWrite,
  type WriteOutcome,
} from "../commit-queue.js";
import type { FencedAppend, JournalRecord } from "../types.js";
import { type HeadCache, writeBatchIn, writeBatchOptimistic } from "./batch.js";
import type { HeldSessions } from "./held.js";
import type { PgSessionLocks } from "./lock.js";
import { inTransaction } from "./transaction.js";
import { mapWriteError, unwrap } from "./writes.js";

export class PgAppends {
  /** Undefined when group commit is off. */
  private readonly queue: CommitQueue | undefined;

  constructor(
    /** The journal's pool, after checking that the journal is still open. */
    private readonly pool: () => pg.Pool,
    /** Heads this journal committed or read under lock: the optimistic append's guesses (batch.ts). */
    private readonly heads: HeadCache,
    private readonly held: HeldSessions,
    private readonly locks: PgSessionLocks,
    groupCommit: boolean | GroupCommitOptions,
  ) {
    this.queue =
      groupCommit === false
        ? undefined
        : new CommitQueue((writes) => this.runBatch(writes), groupCommit === true ? {} : groupCommit);
  }

  /** Batches committed and writes they carried since open (diagnostics, bench/). */
  get stats(): { readonly batches: number; readonly writes: number } {
    return { ...(this.queue?.stats ?? { batches: 0, writes: 0 }) };
  }

  /** Commits whatever is queued. */
  async drain(): Promise<void> {
    await this.queue?.drain();
  }

  /** Commits an append (queued with the others when group commit is on); its session learns what it committed. */
  append(write: AppendWrite): Promise<JournalRecord[]> {
    const { session } = write;
    return this.learning(session, async () =>
      this.queue !== undefined ? this.queue.append(write) : unwrap(await this.runBatch([write])).records,
    );
  }

  /** Runs a write of `session`'s records: a held session learns the head it committed, or forgets its head if it failed. */
  private async learning(session: string, write: () => Promise<JournalRecord[]>): Promise<JournalRecord[]> {
    const generation = this.held.generation(session);
    const before = this.held.writing(session);
    let records: JournalRecord[];
    try {
      records = await write();
    } catch (err) {
      // The stored session is not what this host thought: read it again, and keep no lease on it.
      this.held.forget(session);
      this.locks.distrust(session);
      throw err;
    }
    const last = records[records.length - 1];
    if (last === undefined) return records;
    if (this.held.parked(session)) {
      // The operation ended (its lease parked) while this write was in flight: what was kept is old.
      this.held.forget(session);
      return records;
    }
    const after = this.heads.get(session);
    if (after !== undefined && after.seq === last.seq && after.hash === last.contentHash)
      this.held.committed(session, generation, before, after);
    else this.held.learn(session, generation, { seq: last.seq, hash: last.contentHash });
    return records;
  }

  /** newFence + appendBatch (+ the checkpoint row) as one transaction, queued like any append. */
  async appendUnderNewFence(write: FencedWrite): Promise<FencedAppend> {
    const { session } = write;
    let fence = 0;
    const records = await this.learning(session, async () => {
      const done =
        this.queue !== undefined ? await this.queue.appendUnderNewFence(write) : unwrap(await this.runBatch([write]));
      fence = done.fence;
      return done.records;
    });
    return { fence, records };
  }

  /**
   * The commit queue's runner. Sessions whose head this journal remembers go through one optimistic
   * statement (batch.ts); the rest — and any the statement found moved — through the locking
   * transaction. Each session's writes take one path, so their order holds.
   */
  private async runBatch(writes: readonly QueuedWrite[]): Promise<WriteOutcome[]> {
    let fast: (WriteOutcome | undefined)[];
    try {
      fast = await writeBatchOptimistic(this.pool(), writes, this.heads);
    } catch {
      // Nothing of a failed statement is durable; the locking path decides every write.
      for (const w of writes) this.heads.delete(w.session);
      fast = writes.map(() => undefined);
    }
    const rest = writes.filter((_, i) => fast[i] === undefined);
    if (rest.length === 0) return fast.map((o) => o ?? { ok: false, error: new Error("unreachable") });
    const slow = await this.runLocked(rest);
    let next = 0;
    return fast.map(
      (o) => o ?? slow[next++] ?? { ok: false, error: new Error("a write committed without an outcome") },
    );
  }

  /**
   * The batch in one locking transaction. When the transaction as a whole fails, each write is retried
   * in a transaction of its own, so only the write that broke it fails; a lone write's failure is its
   * outcome.
   */
  private async runLocked(writes: readonly QueuedWrite[]): Promise<WriteOutcome[]> {
    try {
      let committed: Awaited<ReturnType<typeof writeBatchIn>>;
      try {
        committed = await inTransaction(this.pool(), (client) => writeBatchIn(client, writes, mapWriteError));
      } catch (err) {
        throw mapWriteError(`group commit of ${writes.length} writes`, err);
      }
      const { outcomes, heads } = committed;
      for (const [uid, head] of heads) this.heads.set(uid, head);
      return outcomes;
    } catch (error) {
      for (const w of writes) this.heads.delete(w.session);
      if (writes.length === 1) return [{ ok: false, error }];
      const outcomes: WriteOutcome[] = [];
      for (const w of writes) outcomes.push(...(await this.runLocked([w])));
      return outcomes;
    }
  }
}
