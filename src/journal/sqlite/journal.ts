// The embedded default Journal on better-sqlite3. Invariant: every write is one BEGIN IMMEDIATE
// transaction that checks CAS then fence against the session's head pointer, inserts the chained
// records and moves the head pointer and compute-state projection together (writes.ts), so the head
// never drifts from the records and a crash loses at most the uncommitted transaction. The head lives in
// a head row beside the session's newest record (schema version 2, schema.ts), anchored by the session
// row. A record's hashes are stored as hash.ts says (32-byte BLOBs when canonical, schema version 4).
// Appends go through a commit queue (commit-queue.ts): appends that arrive together share one
// BEGIN IMMEDIATE … COMMIT (one fsync), each inside its own savepoint so a failing one rolls back alone,
// and none is acknowledged before the COMMIT returns; every other write first commits what is queued.
import { onlyRecord } from "../collect.js";
import { resolve as resolvePath } from "node:path";
import type Database from "better-sqlite3";
import { ErrorCode, HostError } from "../../errors/index.js";
import type { Event } from "../../gen/agentsessions/v1/common_pb.js";
import { requireAppendArgs, requireImportable, requireSession, UnreadableStorage } from "../chain.js";
import { checkpointOfColumns, registrationColumnsOf, registrationOfColumns, sessionColumnsOf } from "../columns.js";
import { CommitQueue, type GroupCommitOptions, type QueuedWrite, type WriteOutcome } from "../commit-queue.js";
import type { PinnedSession } from "../pin.js";
import { mustExist } from "../plan.js";
import { importedRow, rowFromMeta, validateMeta } from "../session-row.js";
import type {
  CheckpointRow,
  ComputeStateName,
  FencedAppend,
  FencedAppendOptions,
  ForkChild,
  Head,
  ImportedSessionMeta,
  Journal,
  JournalRecord,
  ListSessionsQuery,
  SeqEvent,
  SessionInfo,
  SessionMetaInput,
  SessionPage,
  StoredRegistration,
  VerifiedPosition,
  VerifiedRecordSink,
  VerifyResult,
} from "../types.js";
import { type CheckpointStats, noCheckpoints, WalCheckpointer } from "./checkpointer.js";
import { openReadOnly, openWritable, type SqliteJournalOptions } from "./open.js";
import { eventRows, readEvents, readRange, verifySession } from "./reads.js";
import { SqliteSessionList } from "./session-list.js";
import { decodeStored, prepareStatements, SQLITE_COLUMNS, type Statements, sessionInfoOf } from "./statements.js";
import { SqliteVerifiedPositions } from "./verified.js";
import { mapWriteError, SqliteWrites, writeLabel } from "./writes.js";

export type { SqliteJournalOptions } from "./open.js";

export class SqliteJournal implements Journal {
  readonly kind = "sqlite";
  readonly storage = { sharedByHosts: false, snapshotsInJournal: false } as const;
  private readonly stmts: Statements;
  private readonly writes: SqliteWrites;
  private readonly sessionList: SqliteSessionList;

  /** Undefined when group commit is off: every append is its own transaction. */
  private readonly queue: CommitQueue | undefined;
  /** Undefined for read-only and in-memory journals and with `walCheckpoint: false`. */
  private checkpointer: WalCheckpointer | undefined;
  private readonly positions: SqliteVerifiedPositions;

  private constructor(
    private readonly db: Database.Database,
    groupCommit: boolean | GroupCommitOptions = true,
    private readonly onClose?: () => void,
  ) {
    this.stmts = prepareStatements(db);
    this.positions = new SqliteVerifiedPositions(db);
    this.writes = new SqliteWrites(db, this.stmts, this.positions);
    this.sessionList = new SqliteSessionList(db);
    this.queue =
      groupCommit === false
        ? undefined
        : new CommitQueue((writes) => this.runBatch(writes), groupCommit === true ? {} : groupCommit);
  }

  /** Batches committed and writes they carried since open (diagnostics, bench/). */
  get groupCommitStats(): { readonly batches: number; readonly writes: number } {
    return { ...(this.queue?.stats ?? { batches: 0, writes: 0 }) };
  }

  /**
   * WAL checkpoints run since open, the WAL's size now, in frames, and whether the checkpointer is in
   * its concurrent (worker) mode (diagnostics, tests, bench/).
   */
  get walCheckpointStats(): CheckpointStats & {
    readonly log: number;
    readonly checkpointed: number;
    readonly concurrent: boolean;
  } {
    const counts = this.checkpointer?.stats ?? noCheckpoints();
    const frames = this.checkpointer?.walFrames() ?? { log: 0, checkpointed: 0 };
    return { ...counts, ...frames, concurrent: this.checkpointer?.isConcurrent ?? false };
  }

  /** The commit queue's runner: a lone write is its own transaction, several share one. */
  private runBatch(writes: readonly QueuedWrite[]): WriteOutcome[] {
    const [only] = writes;
    if (writes.length === 1 && only !== undefined) {
      try {
        this.live();
        const outcome: WriteOutcome = { ok: true, ...this.writes.writeInTx(only) };
        this.checkpointer?.afterCommit(1);
        return [outcome];
      } catch (error) {
        return [{ ok: false, error: mapWriteError(writeLabel(only), error) }];
      }
    }
    this.live();
    let outcomes: WriteOutcome[];
    try {
      outcomes = this.writes.batchTx(writes);
    } catch (err) {
      throw mapWriteError(`group commit of ${writes.length} writes`, err);
    }
    this.checkpointer?.afterCommit(writes.length);
    return outcomes;
  }

  /** Commits what the queue holds before a write that is not queued, so writes keep their call order. */
  private settleQueued(): void {
    if (this.queue !== undefined && this.queue.size > 0 && this.db.open) this.queue.drainSync();
  }

  /** Opens (creating if needed) the journal at `path`: WAL, synchronous=FULL, busy timeout, schema check. */
  static open(path: string, opts: SqliteJournalOptions = {}): SqliteJournal {
    const busyTimeoutMs = opts.busyTimeoutMs ?? 5000;
    const readOnly = opts.readOnly === true;
    const { db, mode, onClose } = readOnly ? openReadOnly(path, busyTimeoutMs) : openWritable(path, busyTimeoutMs);
    try {
      const journal = new SqliteJournal(db, readOnly ? false : opts.groupCommit, onClose);
      const wal = opts.walCheckpoint ?? true;
      if (!readOnly && wal !== false && !db.memory && mode === "wal") {
        journal.checkpointer = new WalCheckpointer(db, resolvePath(path), busyTimeoutMs, wal === true ? {} : wal);
      }
      return journal;
    } catch (err) {
      db.close();
      onClose?.();
      throw err;
    }
  }

  async append(session: string, expectedLastSeq: number, fence: number, event: Event): Promise<JournalRecord> {
    return onlyRecord(await this.commit(session, expectedLastSeq, fence, [event]));
  }

  async appendBatch(
    session: string,
    expectedLastSeq: number,
    fence: number,
    events: readonly Event[],
  ): Promise<JournalRecord[]> {
    return this.commit(session, expectedLastSeq, fence, events);
  }

  private commit(
    session: string,
    expectedLastSeq: number,
    fence: number,
    events: readonly Event[],
  ): JournalRecord[] | Promise<JournalRecord[]> {
    requireAppendArgs(session, expectedLastSeq, fence);
    this.live();
    if (this.queue !== undefined) return this.queue.append({ kind: "append", session, expectedLastSeq, fence, events });
    return this.write(`append to session ${session}`, () =>
      this.writes.commitTx(session, expectedLastSeq, fence, events),
    );
  }

  async newFence(session: string): Promise<number> {
    requireSession(session);
    const now = Date.now();
    const row = this.write(`mint fence for session ${session}`, () => this.stmts.mintFence.get(now, session));
    return mustExist(session, row).fence;
  }

  async appendUnderNewFence(
    session: string,
    expectedLastSeq: number,
    events: readonly Event[],
    opts: FencedAppendOptions = {},
  ): Promise<FencedAppend> {
    requireAppendArgs(session, expectedLastSeq, 0);
    if (events.length === 0)
      throw new HostError(ErrorCode.InvalidArgument, "appendUnderNewFence needs at least one event");
    this.live();
    const checkpointDigest = opts.checkpointDigest;
    if (this.queue !== undefined) {
      return this.queue.appendUnderNewFence({ kind: "fenced", session, expectedLastSeq, events, checkpointDigest });
    }
    return this.write(`append to session ${session} under a new fence`, () =>
      this.writes.fencedTx(session, expectedLastSeq, events, checkpointDigest),
    );
  }

  async currentFence(session: string): Promise<number> {
    return this.live().stmts.selectHead.get(session)?.fence ?? 0;
  }

  async recordBytes(session: string, through: number): Promise<number> {
    return this.live().stmts.recordBytes.get(session, through)?.bytes ?? 0;
  }

  async head(session: string): Promise<Head> {
    const row = this.live().stmts.selectHead.get(session);
    return row ? { seq: row.last_seq, hash: row.last_hash } : { seq: 0, hash: "" };
  }

  async *read(session: string, from = 1, to = 0): AsyncIterable<JournalRecord> {
    for await (const row of eventRows(this.liveStatements, session, from, to)) {
      yield {
        seq: row.seq,
        prevHash: row.prev_hash,
        contentHash: row.content_hash,
        fence: row.fence,
        event: decodeStored(session, row),
      };
    }
  }

  async readRange(session: string, from = 1, to = 0): Promise<JournalRecord[]> {
    return readRange(this.liveStatements, session, from, to);
  }

  async readEvents(session: string, from = 1, to = 0): Promise<SeqEvent[]> {
    return readEvents(this.liveStatements, session, from, to);
  }

  async verify(session: string, onRecord?: VerifiedRecordSink): Promise<VerifyResult> {
    return verifySession(this.liveStatements, session, onRecord);
  }

  async fork(parent: string, child: string, atSeq: number, meta: SessionMetaInput): Promise<JournalRecord[]> {
    requireSession(parent);
    requireSession(child);
    this.write(`fork session ${parent} into ${child}`, () => this.writes.forkTx(parent, child, atSeq, meta));
    return this.readRange(child);
  }

  async forkAll(parent: string, atSeq: number, children: readonly ForkChild[]): Promise<JournalRecord[]> {
    requireSession(parent);
    for (const c of children) requireSession(c.meta.uid);
    return this.write(`fork session ${parent} into ${children.length} children`, () =>
      this.writes.forkAllTx(parent, atSeq, children),
    );
  }

  async removeEmptySession(uid: string): Promise<boolean> {
    return this.write(`remove empty session ${uid}`, () => this.stmts.removeEmptySession.run(uid, uid).changes > 0);
  }

  async deleteSession(uid: string): Promise<boolean> {
    return this.write(`delete session ${uid}`, () => this.writes.deleteTx(uid));
  }

  async importSession(meta: ImportedSessionMeta, records: readonly JournalRecord[]): Promise<SessionInfo> {
    requireImportable(meta, records);
    const row = importedRow(meta);
    this.write(`import session ${meta.uid}`, () => this.writes.importTx(row, records));
    const info = await this.getSession(meta.uid);
    if (info === undefined) throw new Error(`session ${meta.uid} vanished after import`);
    return info;
  }

  async createSession(meta: SessionMetaInput): Promise<SessionInfo> {
    validateMeta(meta);
    const row = rowFromMeta(meta, Date.now());
    const inserted = this.write(
      `create session ${meta.uid}`,
      () => this.stmts.insertSession.run(sessionColumnsOf(row)).changes,
    );
    if (inserted === 0) throw new HostError(ErrorCode.AlreadyExists, `session ${meta.uid} already exists`);
    return row;
  }

  async getSession(uid: string): Promise<SessionInfo | undefined> {
    const row = this.live().stmts.selectSession.get(uid);
    return row ? sessionInfoOf(row) : undefined;
  }

  async listSessions(query: ListSessionsQuery): Promise<SessionPage> {
    return this.sessionList.page(this.live().stmts, query);
  }

  /** Prepared on first use and kept (every statement is kept: see ../sqlite-driver.ts). */
  private stateCounts: Database.Statement<[], { state: ComputeStateName; n: number }> | undefined;

  async countByComputeState(): Promise<Partial<Record<ComputeStateName, number>>> {
    this.stateCounts ??= this.live().db.prepare<[], { state: ComputeStateName; n: number }>(
      "SELECT compute_state AS state, count(*) AS n FROM sessions GROUP BY compute_state",
    );
    const rows = this.stateCounts.all();
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  async pinnedSessions(harness: string): Promise<PinnedSession[]> {
    return this.live().stmts.pinnedSessions.all(harness);
  }

  async allSessionUids(): Promise<string[]> {
    return this.live()
      .stmts.allUids.all()
      .map((r) => r.uid);
  }

  async putRegistration(reg: StoredRegistration): Promise<void> {
    this.write(`store registration ${reg.name}`, () => this.stmts.putRegistration.run(registrationColumnsOf(reg)));
  }

  async getRegistration(name: string): Promise<StoredRegistration | undefined> {
    const row = this.live().stmts.getRegistration.get(name);
    return row ? registrationOfColumns(row, SQLITE_COLUMNS.int) : undefined;
  }

  async deleteRegistration(name: string, uid: string): Promise<boolean> {
    return this.write(`delete registration ${name}`, () => this.stmts.deleteRegistration.run(name, uid).changes > 0);
  }

  async listRegistrations(): Promise<StoredRegistration[]> {
    return this.live()
      .stmts.listRegistrations.all()
      .map((row) => registrationOfColumns(row, SQLITE_COLUMNS.int));
  }

  async putCheckpoint(row: CheckpointRow): Promise<void> {
    this.write(`store checkpoint ${row.session}@${row.seq}`, () =>
      this.stmts.putCheckpoint.run(row.session, row.seq, row.contentHash, row.digest, row.createdAtMs),
    );
  }

  async latestCheckpoint(session: string): Promise<CheckpointRow | undefined> {
    const row = this.live().stmts.latestCheckpoint.get(session);
    return row ? checkpointOfColumns(row, SQLITE_COLUMNS.int) : undefined;
  }

  async putVerifiedPosition(row: VerifiedPosition): Promise<void> {
    this.write(`store verified position ${row.session}@${row.seq}`, () => this.positions.store(row));
  }

  async verifiedPosition(session: string): Promise<VerifiedPosition | undefined> {
    return this.live().positions.read(session);
  }

  async checkpointDigests(): Promise<string[]> {
    return this.live()
      .stmts.checkpointDigests.all()
      .map((r) => r.digest);
  }

  /**
   * PRAGMA quick_check walks every page of every table and index. Cached pages are released first
   * (shrink_memory), so a page repaired underneath this connection is read again from the file.
   */
  async probe(): Promise<void> {
    const db = this.live().db;
    db.pragma("shrink_memory");
    const rows = db.pragma("quick_check") as { quick_check: string }[];
    const problems = rows.map((r) => r.quick_check).filter((r) => r !== "ok");
    if (problems.length > 0) throw new UnreadableStorage(`quick_check: ${problems.slice(0, 3).join("; ")}`);
  }

  /** Commits whatever appends are still queued (they were called before close), then closes. */
  async close(): Promise<void> {
    this.settleQueued();
    const checkpointer = this.checkpointer;
    this.checkpointer = undefined;
    await checkpointer?.close();
    if (this.db.open) {
      this.db.close();
      this.onClose?.();
    }
  }

  /**
   * Runs a write that is not queued — after committing the queued ones, so writes keep their call
   * order — mapping a primary-key race to Conflict and an exhausted busy wait to SessionBusy.
   */
  private write<T>(what: string, fn: () => T): T {
    this.live();
    this.settleQueued();
    let result: T;
    try {
      result = fn();
    } catch (err) {
      throw mapWriteError(what, err);
    }
    this.checkpointer?.afterCommit(1);
    return result;
  }

  /** The statements, after checking that the journal is still open (for the page-by-page readers). */
  private readonly liveStatements = (): Statements => this.live().stmts;

  private live(): this {
    if (!this.db.open) throw new HostError(ErrorCode.FailedPrecondition, "journal is closed");
    return this;
  }
}
