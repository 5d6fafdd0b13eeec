// The multi-host Journal on PostgreSQL (`pg`). Invariant: every write is one transaction; an append
// locks its session row (SELECT … FOR UPDATE), checks CAS then fence against the row's head pointer,
// inserts the chained records and moves the head pointer and compute-state projection before commit,
// so concurrent hosts serialise per session and the row never drifts from the records. Appends go
// through a commit queue (commit-queue.ts, batch.ts): appends that arrive together share one
// transaction on one connection, each checked alone, none acknowledged before the COMMIT returns.
// While this process holds a session's cluster lock, the session row comes back with the lock and the
// head and row are served from what was read or committed under that hold (held.ts); the lock
// stays as a lease between this host's operations (lock.ts), so a host's next operation on a
// session it just ran makes no lock round trip; the database's compare-and-swap still decides every append.
import { collectEvents, collectRecords, onlyRecord } from "../collect.js";
import pg from "pg";
import { ErrorCode, HostError } from "../../errors/index.js";
import type { Event } from "../../gen/agentsessions/v1/common_pb.js";
import { requireAppendArgs, requireImportable, requireSession } from "../chain.js";
import type { GroupCommitOptions } from "../commit-queue.js";
import { planImport } from "../plan.js";
import { importedRow, rowFromMeta, tipOfRow, validateMeta } from "../session-row.js";
import type {
  CancelRequest,
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
  PinnedSession,
  SeqEvent,
  SessionInfo,
  SessionLockCounts,
  SessionMetaInput,
  SessionPage,
  StoredRegistration,
  VerifiedPosition,
  VerifiedRecordSink,
  VerifyResult,
} from "../types.js";
import { PgAppends } from "./appends.js";
import { HeadCache } from "./batch.js";
import type { PgCancelChannel } from "./cancel.js";
import { connect, type PostgresJournalOptions } from "./connect.js";
import type { HeldSessions } from "./held.js";
import type { PgListener } from "./listen.js";
import type { PgSessionLocks, SessionLockRelease } from "./lock.js";
import { eventRows, verifyIn } from "./reads.js";
import { type HeadDbRow, int, recordOf, sessionInfoOf, type SessionDbRow } from "./rows.js";
import { PgSideTables } from "./tables.js";
import { inTransaction } from "./transaction.js";
import {
  deleteSessionIn,
  forkAllIn,
  forkIn,
  insertPlanned,
  insertSessionRow,
  mapWriteError,
  mintFence,
  removeEmptySessionIn,
} from "./writes.js";

export { SESSION_HANDOVER_MS, SESSION_LEASE_MS, type PostgresJournalOptions } from "./connect.js";

export class PostgresJournal implements Journal {
  readonly kind = "postgres";
  readonly storage = { sharedByHosts: true, snapshotsInJournal: true } as const;
  private closed = false;
  /** Heads this journal committed or read under lock: the optimistic append's guesses (batch.ts). */
  private readonly heads = new HeadCache();
  private readonly appends: PgAppends;
  private readonly tables: PgSideTables;

  private constructor(
    /** The journal's pool; PgSnapshotStore shares it (and so the schema). */
    readonly pool: pg.Pool,
    /** The schema the tables live in, when one was given. */
    readonly schema: string | undefined,
    /** Sessions held as leases between operations are listed by `locks.parked`. */
    readonly locks: PgSessionLocks,
    /** Heads and rows of the sessions this process holds the cluster lock of (held.ts). */
    private readonly held: HeldSessions,
    /** The one LISTEN connection of cancel and release requests (listen.ts). */
    readonly listener: PgListener,
    private readonly cancels: PgCancelChannel,
    groupCommit: boolean | GroupCommitOptions,
  ) {
    this.appends = new PgAppends(() => this.live().pool, this.heads, held, locks, groupCommit);
    this.tables = new PgSideTables(
      () => this.live().pool,
      (what, fn) => this.write(what, fn),
    );
  }

  /** Batches committed and writes they carried since open (diagnostics, bench/). */
  get groupCommitStats(): { readonly batches: number; readonly writes: number } {
    return this.appends.stats;
  }

  /** Connects and checks the schema (connect.ts: options, URL parameters, defaults). */
  static async open(url: string, opts: PostgresJournalOptions = {}): Promise<PostgresJournal> {
    const c = await connect(url, opts);
    return new PostgresJournal(c.pool, c.schema, c.locks, c.held, c.listener, c.cancels, c.groupCommit);
  }

  /**
   * Multi-host session lock. Takes a session-level advisory lock (64-bit key from sha256 of the schema
   * and uid) on a dedicated connection that stays checked out until the lock is let go, so it outlives
   * any transaction; when the operation releases it, it stays held as a lease for up to
   * `sessionLeaseMs`, and this host's next operation on the session takes it up without a round trip
   * (lock.ts). Returns undefined when another connection holds the session and did not hand it
   * over within `sessionHandoverMs` (another host's operation, or another caller in this one, at once):
   * the placement layer turns that into ABORTED for a concurrent Exec. If the lock's connection dies the
   * lock is gone; fences still refuse the stale writer's appends.
   */
  async tryLockSession(session: string): Promise<SessionLockRelease | undefined> {
    requireSession(session);
    this.live();
    // The session row comes back with the lock (one round trip); the operation's getSession takes it.
    const lock = await this.locks.tryLock<SessionDbRow>(
      session,
      `SELECT * FROM sessions WHERE uid = ${pg.escapeLiteral(session)}`,
    );
    if (lock === undefined) return undefined;
    if (lock.resumed) this.held.resume(session);
    else {
      const row = lock.rows[0];
      this.held.hold(session, row === undefined ? undefined : sessionInfoOf(row));
    }
    return async () => {
      this.held.park(session);
      await lock.release();
    };
  }

  /** The sessions this process holds locked: in use by an operation, and parked as leases. */
  sessionLockCounts(): SessionLockCounts {
    return this.locks.counts();
  }

  /** Cross-host cancel: a NOTIFY that every subscribed host of this schema hears (cancel.ts). */
  async requestCancel(session: string, reason: string): Promise<void> {
    requireSession(session);
    await this.live().cancels.notify(this.pool, session, reason);
  }

  async onCancelRequest(listener: (request: CancelRequest) => void): Promise<() => Promise<void>> {
    return this.live().cancels.subscribe(listener);
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

  private async commit(
    session: string,
    expectedLastSeq: number,
    fence: number,
    events: readonly Event[],
  ): Promise<JournalRecord[]> {
    requireAppendArgs(session, expectedLastSeq, fence);
    this.live();
    return this.appends.append({ kind: "append", session, expectedLastSeq, fence, events });
  }

  /** newFence + appendBatch (+ the checkpoint row) as one transaction, queued like any append. */
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
    return this.appends.appendUnderNewFence({ kind: "fenced", session, expectedLastSeq, events, checkpointDigest });
  }

  async newFence(session: string): Promise<number> {
    requireSession(session);
    this.heads.delete(session);
    // A read begun before the mint must not teach the row it read (its fence is the old one).
    this.held.forget(session);
    const now = Date.now();
    const fence = await this.write(`mint fence for session ${session}`, () => mintFence(this.pool, session, now));
    this.held.forget(session);
    return fence;
  }

  async currentFence(session: string): Promise<number> {
    const row = await this.headRow(session);
    return row ? int(row.fence) : 0;
  }

  async removeEmptySession(uid: string): Promise<boolean> {
    this.heads.delete(uid);
    this.held.forget(uid);
    return this.write(`remove empty session ${uid}`, () => removeEmptySessionIn(this.pool, uid));
  }

  async deleteSession(uid: string): Promise<boolean> {
    this.heads.delete(uid);
    this.held.forget(uid);
    return this.transaction(`delete session ${uid}`, (client) => deleteSessionIn(client, uid));
  }

  async recordBytes(session: string, through: number): Promise<number> {
    return this.tables.recordBytes(session, through);
  }

  /** While this process holds the session's lock, the head it read or committed under that hold (no round trip). */
  async head(session: string): Promise<Head> {
    const known = this.held.head(session);
    if (known !== undefined) return known;
    const generation = this.held.generation(session);
    const row = await this.headRow(session);
    const head = row ? { seq: int(row.last_seq), hash: row.last_hash } : { seq: 0, hash: "" };
    this.held.learn(session, generation, head);
    return head;
  }

  async *read(session: string, from = 1, to = 0): AsyncIterable<JournalRecord> {
    for await (const row of eventRows(this.pool, this.liveCheck, session, from, to)) yield recordOf(session, row);
  }

  async readRange(session: string, from?: number, to?: number): Promise<JournalRecord[]> {
    return collectRecords(this.read(session, from, to));
  }

  async readEvents(session: string, from?: number, to?: number): Promise<SeqEvent[]> {
    return collectEvents(this.read(session, from, to));
  }

  /** Walks the chain inside one REPEATABLE READ snapshot, so a racing append never looks like damage. */
  async verify(session: string, onRecord?: VerifiedRecordSink): Promise<VerifyResult> {
    return inTransaction(
      this.live().pool,
      (client) => verifyIn(client, this.liveCheck, session, onRecord),
      "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    );
  }

  async fork(parent: string, child: string, atSeq: number, meta: SessionMetaInput): Promise<JournalRecord[]> {
    requireSession(parent);
    requireSession(child);
    this.heads.delete(child);
    this.held.forget(child);
    await this.transaction(`fork session ${parent} into ${child}`, (client) =>
      forkIn(client, parent, child, atSeq, meta),
    );
    return this.readRange(child);
  }

  async forkAll(parent: string, atSeq: number, children: readonly ForkChild[]): Promise<JournalRecord[]> {
    requireSession(parent);
    for (const c of children) {
      requireSession(c.meta.uid);
      this.heads.delete(c.meta.uid);
      this.held.forget(c.meta.uid);
    }
    return this.transaction(`fork session ${parent} into ${children.length} children`, (client) =>
      forkAllIn(client, parent, atSeq, children),
    );
  }

  async importSession(meta: ImportedSessionMeta, records: readonly JournalRecord[]): Promise<SessionInfo> {
    requireImportable(meta, records);
    this.heads.delete(meta.uid);
    this.held.forget(meta.uid);
    const row = importedRow(meta);
    await this.transaction(`import session ${meta.uid}`, async (client) => {
      await insertSessionRow(client, row);
      await insertPlanned(client, meta.uid, planImport(tipOfRow(row), records), Date.now());
    });
    const info = await this.getSession(meta.uid);
    if (info === undefined) throw new Error(`session ${meta.uid} vanished after import`);
    return info;
  }

  async createSession(meta: SessionMetaInput): Promise<SessionInfo> {
    validateMeta(meta);
    const row = rowFromMeta(meta, Date.now());
    await this.write(`create session ${meta.uid}`, () => insertSessionRow(this.pool, row));
    return row;
  }

  /** The row read with this process's lock on the session and moved by its own commits since; else a read. */
  async getSession(uid: string): Promise<SessionInfo | undefined> {
    const known = this.held.info(uid);
    if (known !== undefined) return known;
    const generation = this.held.generation(uid);
    const result = await this.live().pool.query<SessionDbRow>("SELECT * FROM sessions WHERE uid = $1", [uid]);
    const row = result.rows[0];
    if (row === undefined) return undefined;
    const info = sessionInfoOf(row);
    this.held.learnRow(uid, generation, info);
    return info;
  }

  listSessions(query: ListSessionsQuery): Promise<SessionPage> {
    return this.tables.listSessions(query);
  }
  countByComputeState(): Promise<Partial<Record<ComputeStateName, number>>> {
    return this.tables.countByComputeState();
  }
  pinnedSessions(harness: string): Promise<PinnedSession[]> {
    return this.tables.pinnedSessions(harness);
  }
  allSessionUids(): Promise<string[]> {
    return this.tables.allSessionUids();
  }
  putRegistration(reg: StoredRegistration): Promise<void> {
    return this.tables.putRegistration(reg);
  }
  getRegistration(name: string): Promise<StoredRegistration | undefined> {
    return this.tables.getRegistration(name);
  }
  deleteRegistration(name: string, uid: string): Promise<boolean> {
    return this.tables.deleteRegistration(name, uid);
  }
  listRegistrations(): Promise<StoredRegistration[]> {
    return this.tables.listRegistrations();
  }
  putCheckpoint(row: CheckpointRow): Promise<void> {
    return this.tables.putCheckpoint(row);
  }
  latestCheckpoint(session: string): Promise<CheckpointRow | undefined> {
    return this.tables.latestCheckpoint(session);
  }
  putVerifiedPosition(row: VerifiedPosition): Promise<void> {
    return this.tables.putVerifiedPosition(row);
  }
  verifiedPosition(session: string): Promise<VerifiedPosition | undefined> {
    return this.tables.verifiedPosition(session);
  }
  checkpointDigests(): Promise<string[]> {
    return this.tables.checkpointDigests();
  }

  /**
   * Reads every stored event row (its bytes' length, so each heap page is read; a corrupt page fails
   * with data_corrupted, which isJournalUnreadable classifies).
   */
  async probe(): Promise<void> {
    await this.live().pool.query("SELECT sum(octet_length(event)) FROM events");
  }

  /** Releases held session locks (their connections end, so other hosts can take them) and the pool. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.appends.drain();
    this.closed = true;
    await this.locks.close();
    await this.listener.close();
    await this.pool.end();
  }

  private headRow(session: string): Promise<HeadDbRow | undefined> {
    return this.tables.headRow(session);
  }

  /** One transaction on one pooled connection (inTransaction); write errors are mapped by `mapWriteError`. */
  private async transaction<T>(what: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    try {
      return await inTransaction(this.live().pool, fn);
    } catch (err) {
      throw mapWriteError(what, err);
    }
  }

  /** A single-statement write (its own implicit transaction) with the same error mapping. */
  private async write<T>(what: string, fn: () => Promise<T>): Promise<T> {
    this.live();
    try {
      return await fn();
    } catch (err) {
      throw mapWriteError(what, err);
    }
  }

  /** Throws FailedPrecondition once the journal is closed (for the page-by-page readers). */
  private readonly liveCheck = (): void => {
    this.live();
  };

  private live(): this {
    if (this.closed) throw new HostError(ErrorCode.FailedPrecondition, "journal is closed");
    return this;
  }
}
