// The multi-host Journal on PostgreSQL (`pg`). Invariant: every write is one transaction; an append
// locks its session row (SELECT … FOR UPDATE), checks CAS then fence against the row's head pointer,
// inserts the chained records and moves the head pointer and compute-state projection before commit,
// so concurrent hosts serialise per session and the row never drifts from the records. Appends go
// through a commit queue (commit-queue.ts, postgres-batch.ts): appends that arrive together share one
// transaction on one connection, each checked alone, none acknowledged before the COMMIT returns.
// While this process holds a session's cluster lock, the session row comes back with the lock and the
// head and row are served from what was read or committed under that hold (postgres-held.ts); the lock
// stays as a lease between this host's operations (postgres-lock.ts), so a host's next operation on a
// session it just ran makes no lock round trip; the database's compare-and-swap still decides every append.
import { inTransaction } from "./postgres-transaction.js";
import { noteEventBytes } from "../wire/event-bytes.js";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import pg from "pg";
import { ErrorCode, HostError } from "../errors/index.js";
import { EventSchema, type Event } from "../gen/agentsessions/v1/common_pb.js";
import {
  chainEvents,
  forkMarkerEvent,
  requireAppendArgs,
  requireForkRange,
  requireSession,
  verifyChain,
  type StoredRecord,
  requireImportable,
} from "./chain.js";
import { projectComputeState } from "./compute-state.js";
import {
  decodePageToken,
  encodePageToken,
  normalizePageSize,
  normalizeProject,
  READ_PAGE_SIZE,
  sessionFilterOf,
} from "./paging.js";
import { CommitQueue, type GroupCommitOptions, type QueuedWrite, type WriteOutcome } from "./commit-queue.js";
import { HeadCache, writeBatchIn, writeBatchOptimistic } from "./postgres-batch.js";
import { PgCancelChannel } from "./postgres-cancel.js";
import { HeldSessions } from "./postgres-held.js";
import { PgListener } from "./postgres-listen.js";
import { PgSessionLocks, type SessionLockRelease } from "./postgres-lock.js";
import {
  checkpointOf,
  decodeEvent,
  int,
  PIN_SELECT,
  pinOfRow,
  recordOf,
  registrationOf,
  SESSION_COLUMNS,
  SESSION_VALUES,
  sessionInfoOf,
  sessionParams,
  type CheckpointDbRow,
  type EventDbRow,
  type HeadDbRow,
  type RegistrationDbRow,
  type SessionDbRow,
} from "./postgres-rows.js";
import { isSerializationFailure, isUniqueViolation, migrate, PgSchemaName, quoteIdent } from "./postgres-schema.js";
import { projectPins, type PinnedSession, type SessionPin } from "./pin.js";
import { importedRow, rowFromMeta, setPin, validateMeta } from "./session-row.js";
import type {
  CancelRequest,
  ImportedSessionMeta,
  CheckpointRow,
  VerifiedPosition,
  ComputeStateName,
  FencedAppend,
  FencedAppendOptions,
  ForkChild,
  Head,
  Journal,
  JournalRecord,
  SeqEvent,
  ListSessionsQuery,
  SessionInfo,
  SessionLockCounts,
  SessionMetaInput,
  SessionPage,
  StoredRegistration,
  VerifyResult,
  VerifiedRecordSink,
} from "./types.js";

export interface PostgresJournalOptions {
  /** PostgreSQL schema holding every table (created if missing); default: the server's search_path. */
  readonly schema?: string;
  /** Connections in the journal's pool (default 10). */
  readonly poolSize?: number;
  /**
   * Sessions this host holds locked at once, in use and parked as leases (default 256); a lock wanted
   * past it lets the oldest parked lease go, or is refused UNAVAILABLE when none is parked. Each held
   * lock takes a slot of PostgreSQL's shared lock table (max_locks_per_transaction × max_connections,
   * 6,400 by default) until it is let go, so hosts × maxSessionLocks must stay well under it.
   */
  readonly maxSessionLocks?: number;
  /**
   * Connections the session locks are spread over (default 4): a session always uses the same one,
   * and each runs one lock statement at a time (each a fraction of a ms), so a few carry hundreds of
   * sessions; one more is opened to listen for cancel and release requests.
   */
  readonly sessionLockConnections?: number;
  /**
   * How long, in ms, a session's lock stays held as a lease after this host's operation on it ends
   * (default SESSION_LEASE_MS, 5,000). This host's next operation on the session within it takes no lock
   * round trip and reads no session row; another host that wants the session asks for it and gets it as
   * soon as this host hears the request. 0: every lock is let go when its operation ends (one lock and
   * one unlock round trip per operation).
   */
  readonly sessionLeaseMs?: number;
  /**
   * How long, in ms, this host waits for another host to hand over a session it holds before refusing
   * the operation ABORTED (default SESSION_HANDOVER_MS, 500). A lease is handed over in about one round
   * trip; an operation in progress is not — its session is refused after this wait, as before leases.
   */
  readonly sessionHandoverMs?: number;
  /**
   * How long, in ms, one statement on a lock connection may take (default 10,000) before the connection
   * is given up: its backend, and every lock it holds, go with it; parked leases on it are dropped and
   * the call that waited is refused UNAVAILABLE. Lock statements take a fraction of a ms, but the row
   * read that comes with a lock waits behind a lock on the sessions table (a migration, say), and a
   * connection to a server that stopped answering would otherwise stall its sessions until TCP gives up.
   */
  readonly sessionLockStatementTimeoutMs?: number;
  /**
   * Group commit (default on, `maxBatch` 256 writes): appends that arrive in the same event-loop turn,
   * and every append queued while a batch is committing, share one transaction on one connection (one
   * WAL flush) — one batch in flight per journal. `false`: each append is its own transaction on its
   * own pooled connection, several in parallel (the one-transaction-per-append baseline).
   */
  readonly groupCommit?: boolean | GroupCommitOptions;
}

/** Default `sessionLeaseMs`: long enough to cover the gap between a client's turns, short enough that
 * a host gone quiet keeps no session from others for long (they ask for it anyway). */
export const SESSION_LEASE_MS = 5_000;
/** Default `sessionHandoverMs`: many round trips, and an event-loop stall, of a loaded host. */
export const SESSION_HANDOVER_MS = 500;

/** Rows per INSERT when a batch or fork marker is written. */
const INSERT_CHUNK = 500;
const LAST_SEQ_UNBOUNDED = Number.MAX_SAFE_INTEGER;

type Queryable = Pick<pg.ClientBase, "query">;

export class PostgresJournal implements Journal {
  readonly kind = "postgres";
  readonly storage = { sharedByHosts: true, snapshotsInJournal: true } as const;
  private closed = false;
  /** Undefined when group commit is off. */
  private readonly queue: CommitQueue | undefined;
  /** Heads this journal committed or read under lock: the optimistic append's guesses (postgres-batch.ts). */
  private readonly heads = new HeadCache();
  private constructor(
    /** The journal's pool; PgSnapshotStore shares it (and so the schema). */
    readonly pool: pg.Pool,
    /** The schema the tables live in, when one was given. */
    readonly schema: string | undefined,
    /** Sessions held as leases between operations are listed by `locks.parked`. */
    readonly locks: PgSessionLocks,
    /** Heads and rows of the sessions this process holds the cluster lock of (postgres-held.ts). */
    private readonly held: HeldSessions,
    /** The one LISTEN connection of cancel and release requests (postgres-listen.ts). */
    readonly listener: PgListener,
    private readonly cancels: PgCancelChannel,
    groupCommit: boolean | GroupCommitOptions,
  ) {
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
   * Connects, creates or checks the schema (FailedPrecondition when its stamp is newer than this build).
   * The schema comes from `opts.schema`, else from a `?schema=NAME` URL parameter (so `openJournal`
   * URLs can name one), else the server's default search_path; the session-lock options likewise from
   * `opts`, else from `max_session_locks`, `session_lock_connections`, `session_lease_ms` and
   * `session_handover_ms` URL parameters, else their defaults.
   */
  static async open(url: string, opts: PostgresJournalOptions = {}): Promise<PostgresJournal> {
    const target = splitUrlParams(url);
    const schema = parseSchema(opts.schema ?? target.schema);
    const lockOpts = { ...target.lockOptions, ...definedOnly(opts) };
    // Checked before anything connects, so a bad value leaves nothing open.
    const lockSettings = {
      maxHeld: wholeAtLeast(1, lockOpts.maxSessionLocks, 256, "maxSessionLocks"),
      lanes: wholeAtLeast(1, lockOpts.sessionLockConnections, 4, "sessionLockConnections"),
      leaseMs: wholeAtLeast(0, lockOpts.sessionLeaseMs, SESSION_LEASE_MS, "sessionLeaseMs"),
      handoverMs: wholeAtLeast(0, lockOpts.sessionHandoverMs, SESSION_HANDOVER_MS, "sessionHandoverMs"),
      statementTimeoutMs: wholeAtLeast(1, opts.sessionLockStatementTimeoutMs, 10_000, "sessionLockStatementTimeoutMs"),
    };
    const config = poolConfig(target.url, schema);
    const pool = new pg.Pool({ ...config, max: wholeAtLeast(1, opts.poolSize, 10, "poolSize") });
    // An idle connection that drops is removed by the pool; the next checkout reconnects.
    pool.on("error", () => undefined);
    try {
      const client = await pool.connect();
      try {
        await migrate(client, schema);
      } finally {
        client.release();
      }
    } catch (err) {
      await pool.end().catch(() => undefined);
      if (err instanceof HostError) throw err;
      if (isConnectionError(err)) {
        throw new HostError(ErrorCode.Unavailable, `cannot connect to the PostgreSQL journal: ${errorText(err)}`, {
          cause: err,
        });
      }
      throw err;
    }
    const held = new HeldSessions();
    const listener = new PgListener(config);
    const locks = new PgSessionLocks(config, schema ?? "", listener, {
      ...lockSettings,
      onLetGo: (session) => held.drop(session),
      onLost: (session) => held.forget(session),
    });
    return new PostgresJournal(
      pool,
      schema,
      locks,
      held,
      listener,
      new PgCancelChannel(listener, schema ?? ""),
      opts.groupCommit ?? true,
    );
  }

  /**
   * Multi-host session lock. Takes a session-level advisory lock (64-bit key from sha256 of the schema
   * and uid) on a dedicated connection that stays checked out until the lock is let go, so it outlives
   * any transaction; when the operation releases it, it stays held as a lease for up to
   * `sessionLeaseMs`, and this host's next operation on the session takes it up without a round trip
   * (postgres-lock.ts). Returns undefined when another connection holds the session and did not hand it
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

  /** Cross-host cancel: a NOTIFY that every subscribed host of this schema hears (postgres-cancel.ts). */
  async requestCancel(session: string, reason: string): Promise<void> {
    requireSession(session);
    await this.live().cancels.notify(this.pool, session, reason);
  }

  async onCancelRequest(listener: (request: CancelRequest) => void): Promise<() => Promise<void>> {
    return this.live().cancels.subscribe(listener);
  }

  async append(session: string, expectedLastSeq: number, fence: number, event: Event): Promise<JournalRecord> {
    const [record] = await this.commit(session, expectedLastSeq, fence, [event]);
    if (record === undefined) throw new Error("append committed no record");
    return record;
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
    const write = { kind: "append", session, expectedLastSeq, fence, events } as const;
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
    const write = {
      kind: "fenced",
      session,
      expectedLastSeq,
      events,
      checkpointDigest: opts.checkpointDigest,
    } as const;
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
   * statement (postgres-batch.ts); the rest — and any the statement found moved — through the locking
   * transaction. Each session's writes take one path, so their order holds.
   */
  private async runBatch(writes: readonly QueuedWrite[]): Promise<WriteOutcome[]> {
    let fast: (WriteOutcome | undefined)[];
    try {
      fast = await writeBatchOptimistic(this.live().pool, writes, this.heads);
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
      const { outcomes, heads } = await this.transaction(`group commit of ${writes.length} writes`, (client) =>
        writeBatchIn(client, writes, mapWriteError),
      );
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

  async newFence(session: string): Promise<number> {
    requireSession(session);
    this.heads.delete(session);
    // A read begun before the mint must not teach the row it read (its fence is the old one).
    this.held.forget(session);
    const now = Date.now();
    const result = await this.write(`mint fence for session ${session}`, () =>
      this.pool.query<{ fence: string }>(
        `INSERT INTO sessions (uid, project, created_at_ms, updated_at_ms, fence) VALUES ($1, 'default', $2, $2, 1)
         ON CONFLICT (uid) DO UPDATE SET fence = sessions.fence + 1, updated_at_ms = EXCLUDED.updated_at_ms
         RETURNING fence`,
        [session, now],
      ),
    );
    const row = result.rows[0];
    if (!row) throw new Error("fence mint returned no row");
    this.held.forget(session);
    return int(row.fence);
  }

  async currentFence(session: string): Promise<number> {
    const row = await this.headRow(session);
    return row ? int(row.fence) : 0;
  }

  async removeEmptySession(uid: string): Promise<boolean> {
    this.heads.delete(uid);
    this.held.forget(uid);
    const result = await this.write(`remove empty session ${uid}`, () =>
      this.pool.query(
        "DELETE FROM sessions WHERE uid = $1 AND last_seq = 0 AND NOT EXISTS (SELECT 1 FROM events WHERE session = $1)",
        [uid],
      ),
    );
    return (result.rowCount ?? 0) > 0;
  }

  async deleteSession(uid: string): Promise<boolean> {
    this.heads.delete(uid);
    this.held.forget(uid);
    return this.transaction(`delete session ${uid}`, async (client) => {
      // The row first: it is what every append locks, so a racing writer waits and then finds no head.
      const removed = await client.query("DELETE FROM sessions WHERE uid = $1", [uid]);
      await client.query("DELETE FROM events WHERE session = $1", [uid]);
      await client.query("DELETE FROM checkpoints WHERE session = $1", [uid]);
      await client.query("DELETE FROM verified_positions WHERE session = $1", [uid]);
      return (removed.rowCount ?? 0) > 0;
    });
  }

  async recordBytes(session: string, through: number): Promise<number> {
    const result = await this.live().pool.query<{ bytes: string | null }>(
      "SELECT SUM(octet_length(event))::text AS bytes FROM events WHERE session = $1 AND seq <= $2",
      [session, through],
    );
    return Number(result.rows[0]?.bytes ?? 0);
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
    for await (const row of this.rows(this.pool, session, from, to)) yield recordOf(session, row);
  }

  async readRange(session: string, from?: number, to?: number): Promise<JournalRecord[]> {
    const out: JournalRecord[] = [];
    for await (const rec of this.read(session, from, to)) out.push(rec);
    return out;
  }

  async readEvents(session: string, from?: number, to?: number): Promise<SeqEvent[]> {
    const out: SeqEvent[] = [];
    for await (const rec of this.read(session, from, to)) out.push({ seq: rec.seq, event: rec.event });
    return out;
  }

  /** Raw rows in seq order, one bounded keyset query per page, so a long session is never loaded at once. */
  private async *rows(q: Queryable, session: string, from: number, to: number): AsyncIterable<EventDbRow> {
    let after = Math.max(1, from) - 1;
    const last = to > 0 ? to : LAST_SEQ_UNBOUNDED;
    while (after < last) {
      this.live();
      const page = await q.query<EventDbRow>(
        "SELECT seq, prev_hash, content_hash, fence, event FROM events WHERE session = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4",
        [session, after, last, READ_PAGE_SIZE],
      );
      for (const row of page.rows) yield row;
      const tail = page.rows[page.rows.length - 1];
      if (page.rows.length < READ_PAGE_SIZE || tail === undefined) return;
      after = int(tail.seq);
    }
  }

  /** Walks the chain inside one REPEATABLE READ snapshot, so a racing append never looks like damage. */
  async verify(session: string, onRecord?: VerifiedRecordSink): Promise<VerifyResult> {
    return inTransaction(
      this.live().pool,
      (client) => this.verifyIn(client, session, onRecord),
      "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    );
  }

  private async verifyIn(client: pg.PoolClient, session: string, onRecord?: VerifiedRecordSink): Promise<VerifyResult> {
    const pointer = await client.query<{ last_seq: string | null; last_hash: string | null; max_seq: string | null }>(
      `SELECT s.last_seq, s.last_hash, (SELECT MAX(seq) FROM events e WHERE e.session = $1) AS max_seq
       FROM (SELECT 1) one LEFT JOIN sessions s ON s.uid = $1`,
      [session],
    );
    const found = pointer.rows[0];
    const recorded: Head =
      found && found.last_seq !== null
        ? { seq: int(found.last_seq), hash: found.last_hash ?? "" }
        : { seq: 0, hash: "" };
    const stray = found && found.max_seq !== null ? int(found.max_seq) : 0;
    if (stray > recorded.seq) {
      return {
        ok: false,
        session,
        kind: "tampered",
        seq: recorded.seq + 1,
        message: `session ${session}: seq ${stray} lies beyond the recorded head seq ${recorded.seq}`,
      };
    }
    const rows = this.rows(client, session, 1, Math.max(recorded.seq, 1));
    async function* stored(): AsyncIterable<StoredRecord> {
      for await (const row of rows) {
        yield {
          seq: int(row.seq),
          prevHash: row.prev_hash,
          contentHash: row.content_hash,
          fence: int(row.fence),
          decode: () => fromBinary(EventSchema, row.event),
        };
      }
    }
    return verifyChain(session, stored(), recorded, onRecord);
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
    return this.transaction(`fork session ${parent} into ${children.length} children`, async (client) => {
      const markers: JournalRecord[] = [];
      for (const c of children) {
        const marker = await forkIn(client, parent, c.meta.uid, atSeq, c.meta);
        if (c.checkpointDigest !== undefined) {
          await client.query(
            `INSERT INTO checkpoints (session, seq, content_hash, digest, created_at_ms) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (session, seq) DO UPDATE SET content_hash = EXCLUDED.content_hash, digest = EXCLUDED.digest,
               created_at_ms = EXCLUDED.created_at_ms`,
            [c.meta.uid, marker.seq, marker.contentHash, c.checkpointDigest, Date.now()],
          );
        }
        markers.push(marker);
      }
      return markers;
    });
  }

  async importSession(meta: ImportedSessionMeta, records: readonly JournalRecord[]): Promise<SessionInfo> {
    requireImportable(meta, records);
    this.heads.delete(meta.uid);
    this.held.forget(meta.uid);
    const row = importedRow(meta);
    await this.transaction(`import session ${meta.uid}`, async (client) => {
      const inserted = await client.query(
        `INSERT INTO sessions (${SESSION_COLUMNS}) VALUES (${SESSION_VALUES}) ON CONFLICT (uid) DO NOTHING`,
        sessionParams(row),
      );
      if (inserted.rowCount !== 1) throw new HostError(ErrorCode.AlreadyExists, `session ${meta.uid} already exists`);
      await insertChained(client, meta.uid, records, "NONE", Date.now(), undefined);
    });
    const info = await this.getSession(meta.uid);
    if (info === undefined) throw new Error(`session ${meta.uid} vanished after import`);
    return info;
  }

  async createSession(meta: SessionMetaInput): Promise<SessionInfo> {
    validateMeta(meta);
    const row = rowFromMeta(meta, Date.now());
    const result = await this.write(`create session ${meta.uid}`, () =>
      this.pool.query(
        `INSERT INTO sessions (${SESSION_COLUMNS}) VALUES (${SESSION_VALUES}) ON CONFLICT (uid) DO NOTHING`,
        sessionParams(row),
      ),
    );
    if (result.rowCount !== 1) throw new HostError(ErrorCode.AlreadyExists, `session ${meta.uid} already exists`);
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

  async listSessions(query: ListSessionsQuery): Promise<SessionPage> {
    const project = normalizeProject(query.project);
    const size = normalizePageSize(query.pageSize);
    const cursor = decodePageToken(query.pageToken);
    const filter = sessionFilterOf(query);
    const pool = this.live().pool;
    const params: unknown[] = [project];
    const where = ["project = $1"];
    const param = (value: unknown): string => {
      params.push(value);
      return `$${params.length}`;
    };
    if (filter.harness !== undefined) where.push(`harness = ${param(filter.harness)}`);
    if (filter.parentUid !== undefined) where.push(`parent_uid = ${param(filter.parentUid)}`);
    if (filter.states !== undefined) where.push(`compute_state = ANY(${param(filter.states)}::text[])`);
    if (cursor) {
      const at = param(cursor.createdAtMs);
      where.push(`(created_at_ms < ${at} OR (created_at_ms = ${at} AND uid > ${param(cursor.uid)}))`);
    }
    const limit = param(size + 1);
    const result = await pool.query<SessionDbRow>(
      `SELECT * FROM sessions WHERE ${where.join(" AND ")} ORDER BY created_at_ms DESC, uid ASC LIMIT ${limit}`,
      params,
    );
    const page = result.rows.slice(0, size).map(sessionInfoOf);
    const last = page[page.length - 1];
    const nextPageToken =
      result.rows.length > size && last ? encodePageToken({ createdAtMs: last.createdAtMs, uid: last.uid }) : "";
    return { sessions: page, nextPageToken };
  }

  async countByComputeState(): Promise<Partial<Record<ComputeStateName, number>>> {
    const result = await this.live().pool.query<{ state: ComputeStateName; n: string }>(
      "SELECT compute_state AS state, count(*) AS n FROM sessions GROUP BY compute_state",
    );
    return Object.fromEntries(result.rows.map((r) => [r.state, Number(r.n)]));
  }

  async pinnedSessions(harness: string): Promise<PinnedSession[]> {
    const result = await this.live().pool.query<PinnedSession>(
      `SELECT uid, pin_version AS version, pin_digest AS digest FROM sessions
       WHERE pin_harness = $1 AND pin_seq > 0 ORDER BY uid`,
      [harness],
    );
    return result.rows;
  }

  async allSessionUids(): Promise<string[]> {
    const result = await this.live().pool.query<{ uid: string }>("SELECT uid FROM sessions ORDER BY uid");
    return result.rows.map((r) => r.uid);
  }

  async putRegistration(reg: StoredRegistration): Promise<void> {
    await this.write(`store registration ${reg.name}`, () =>
      this.pool.query(
        `INSERT INTO harnesses (name, uid, spec, spec_digest, state, retire_reason, retired_at_ms, created_at_ms, updated_at_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (name) DO UPDATE SET uid = EXCLUDED.uid, spec = EXCLUDED.spec, spec_digest = EXCLUDED.spec_digest,
           state = EXCLUDED.state, retire_reason = EXCLUDED.retire_reason, retired_at_ms = EXCLUDED.retired_at_ms,
           created_at_ms = EXCLUDED.created_at_ms, updated_at_ms = EXCLUDED.updated_at_ms`,
        [
          reg.name,
          reg.uid,
          reg.spec,
          reg.specDigest,
          reg.state,
          reg.retireReason,
          reg.retiredAtMs,
          reg.createdAtMs,
          reg.updatedAtMs,
        ],
      ),
    );
  }

  async getRegistration(name: string): Promise<StoredRegistration | undefined> {
    const result = await this.live().pool.query<RegistrationDbRow>("SELECT * FROM harnesses WHERE name = $1", [name]);
    const row = result.rows[0];
    return row ? registrationOf(row) : undefined;
  }

  async deleteRegistration(name: string, uid: string): Promise<boolean> {
    return this.write(`delete registration ${name}`, async () => {
      const result = await this.pool.query("DELETE FROM harnesses WHERE name = $1 AND uid = $2", [name, uid]);
      return (result.rowCount ?? 0) > 0;
    });
  }

  async listRegistrations(): Promise<StoredRegistration[]> {
    const result = await this.live().pool.query<RegistrationDbRow>("SELECT * FROM harnesses ORDER BY name");
    return result.rows.map(registrationOf);
  }

  async putCheckpoint(row: CheckpointRow): Promise<void> {
    await this.write(`store checkpoint ${row.session}@${row.seq}`, () =>
      this.pool.query(
        `INSERT INTO checkpoints (session, seq, content_hash, digest, created_at_ms) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (session, seq) DO UPDATE SET content_hash = EXCLUDED.content_hash, digest = EXCLUDED.digest,
           created_at_ms = EXCLUDED.created_at_ms`,
        [row.session, row.seq, row.contentHash, row.digest, row.createdAtMs],
      ),
    );
  }

  async latestCheckpoint(session: string): Promise<CheckpointRow | undefined> {
    const result = await this.live().pool.query<CheckpointDbRow>(
      "SELECT session, seq, content_hash, digest, created_at_ms FROM checkpoints WHERE session = $1 ORDER BY seq DESC LIMIT 1",
      [session],
    );
    const row = result.rows[0];
    return row ? checkpointOf(row) : undefined;
  }

  async putVerifiedPosition(row: VerifiedPosition): Promise<void> {
    await this.write(`store verified position ${row.session}@${row.seq}`, () =>
      this.pool.query(
        `INSERT INTO verified_positions (session, seq, hash, projection, digest, created_at_ms) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (session) DO UPDATE SET seq = EXCLUDED.seq, hash = EXCLUDED.hash, projection = EXCLUDED.projection,
           digest = EXCLUDED.digest, created_at_ms = EXCLUDED.created_at_ms
         WHERE EXCLUDED.seq > verified_positions.seq`,
        [row.session, row.seq, row.hash, Buffer.from(row.projection), row.digest, row.createdAtMs],
      ),
    );
  }

  async verifiedPosition(session: string): Promise<VerifiedPosition | undefined> {
    const result = await this.live().pool.query<{
      seq: string;
      hash: string;
      projection: Buffer;
      digest: string;
      created_at_ms: string;
    }>(
      "SELECT seq::text AS seq, hash, projection, digest, created_at_ms::text AS created_at_ms FROM verified_positions WHERE session = $1",
      [session],
    );
    const row = result.rows[0];
    return row
      ? {
          session,
          seq: Number(row.seq),
          hash: row.hash,
          projection: new Uint8Array(row.projection),
          digest: row.digest,
          createdAtMs: Number(row.created_at_ms),
        }
      : undefined;
  }

  async checkpointDigests(): Promise<string[]> {
    const result = await this.live().pool.query<{ digest: string }>(
      "SELECT DISTINCT digest FROM checkpoints ORDER BY digest",
    );
    return result.rows.map((r) => r.digest);
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
    await this.queue?.drain();
    this.closed = true;
    await this.locks.close();
    await this.listener.close();
    await this.pool.end();
  }

  private async headRow(session: string): Promise<HeadDbRow | undefined> {
    const result = await this.live().pool.query<HeadDbRow>(
      `SELECT fence, last_seq, last_hash, compute_state, ${PIN_SELECT} FROM sessions WHERE uid = $1`,
      [session],
    );
    return result.rows[0];
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

  private live(): this {
    if (this.closed) throw new HostError(ErrorCode.FailedPrecondition, "journal is closed");
    return this;
  }
}

/** Inserts chained records (in bounded multi-row statements) and moves the head pointer with them. */
/** One child of a fork, inside the caller's transaction; resolves to the child's fork marker. */
async function forkIn(
  client: pg.PoolClient,
  parent: string,
  child: string,
  atSeq: number,
  meta: SessionMetaInput,
): Promise<JournalRecord> {
  const source = await client.query<HeadDbRow>(
    `SELECT fence, last_seq, last_hash, compute_state, ${PIN_SELECT} FROM sessions WHERE uid = $1 FOR SHARE`,
    [parent],
  );
  const parentRow = source.rows[0];
  if (!parentRow) throw new HostError(ErrorCode.NotFound, `session ${parent} not found`);
  requireForkRange(parent, atSeq, { seq: int(parentRow.last_seq), hash: parentRow.last_hash });
  const now = Date.now();
  const row = rowFromMeta({ ...meta, uid: child, parentUid: meta.parentUid ?? parent, forkSeq: atSeq }, now);
  row.fence = 1;
  setPin(row, atSeq === int(parentRow.last_seq) ? pinOfRow(parentRow) : await pinThrough(client, parent, atSeq));
  const inserted = await client.query(
    `INSERT INTO sessions (${SESSION_COLUMNS}) VALUES (${SESSION_VALUES}) ON CONFLICT (uid) DO NOTHING`,
    sessionParams(row),
  );
  if (inserted.rowCount !== 1) throw new HostError(ErrorCode.AlreadyExists, `session ${child} already exists`);
  const forkPoint = await client.query<{ content_hash: string }>(
    "SELECT content_hash FROM events WHERE session = $1 AND seq = $2",
    [parent, atSeq],
  );
  const pointHash = forkPoint.rows[0]?.content_hash;
  if (pointHash === undefined)
    throw new HostError(ErrorCode.DataLoss, `session ${parent}: record seq ${atSeq} is missing`);
  const copied = await client.query(
    `INSERT INTO events (session, seq, prev_hash, content_hash, fence, event)
     SELECT $1, seq, prev_hash, content_hash, fence, event FROM events WHERE session = $2 AND seq <= $3`,
    [child, parent, atSeq],
  );
  if (copied.rowCount !== atSeq) {
    throw new HostError(
      ErrorCode.DataLoss,
      `session ${parent}: expected ${atSeq} records to fork, found ${copied.rowCount ?? 0}`,
    );
  }
  const marker = chainEvents({ seq: atSeq, hash: pointHash }, row.fence, [forkMarkerEvent(atSeq, meta.forkedBy)]);
  await insertChained(client, child, marker, "NONE", now, row.pin);
  const [record] = marker;
  if (record === undefined) throw new Error("fork marker was not chained");
  return record;
}

async function insertChained(
  client: pg.PoolClient,
  session: string,
  records: readonly JournalRecord[],
  state: ComputeStateName,
  now: number,
  pin: SessionPin | undefined,
): Promise<void> {
  let computeState = state;
  for (let i = 0; i < records.length; i += INSERT_CHUNK) {
    const chunk = records.slice(i, i + INSERT_CHUNK);
    await client.query(
      `INSERT INTO events (session, seq, prev_hash, content_hash, fence, event)
       SELECT $1::text, r.seq, r.prev_hash, r.content_hash, r.fence, r.event
       FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bytea[]) AS r(seq, prev_hash, content_hash, fence, event)`,
      [
        session,
        chunk.map((r) => r.seq),
        chunk.map((r) => r.prevHash),
        chunk.map((r) => r.contentHash),
        chunk.map((r) => r.fence),
        chunk.map((r) => noteEventBytes(r.event, toBinary(EventSchema, r.event))),
      ],
    );
  }
  for (const r of records) computeState = projectComputeState(computeState, r.event);
  const newPin = projectPins(pin, records);
  const last = records[records.length - 1];
  if (last !== undefined) {
    await client.query(
      `UPDATE sessions SET last_seq = $1, last_hash = $2, compute_state = $3, updated_at_ms = $4, pin_seq = $6,
         pin_harness = $7, pin_version = $8, pin_digest = $9 WHERE uid = $5`,
      [
        last.seq,
        last.contentHash,
        computeState,
        now,
        session,
        newPin?.seq ?? 0,
        newPin?.harness ?? "",
        newPin?.version ?? "",
        newPin?.digest ?? "",
      ],
    );
  }
}

/** The pin a fork child inherits below the parent's head: the parent's records 1..atSeq folded. */
async function pinThrough(client: pg.PoolClient, parent: string, atSeq: number): Promise<SessionPin | undefined> {
  const result = await client.query<EventDbRow>(
    "SELECT seq, prev_hash, content_hash, fence, event FROM events WHERE session = $1 AND seq <= $2 ORDER BY seq",
    [parent, atSeq],
  );
  return projectPins(
    undefined,
    result.rows.map((r) => ({ seq: int(r.seq), event: decodeEvent(parent, r) })),
  );
}

function unwrap(outcomes: readonly WriteOutcome[]): { fence: number; records: JournalRecord[] } {
  const [outcome] = outcomes;
  if (outcome === undefined) throw new Error("a write committed without an outcome");
  if (!outcome.ok) throw outcome.error;
  return { fence: outcome.fence, records: outcome.records };
}

function mapWriteError(what: string, err: unknown): unknown {
  if (err instanceof HostError) return err;
  if (isUniqueViolation(err)) {
    return new HostError(ErrorCode.Conflict, `${what}: seq conflict (a concurrent writer committed first)`, {
      cause: err,
    });
  }
  if (isSerializationFailure(err)) {
    return new HostError(ErrorCode.Conflict, `${what}: lost a serialization race with a concurrent writer`, {
      cause: err,
    });
  }
  return err;
}

function parseSchema(schema: string | undefined): string | undefined {
  if (schema === undefined) return undefined;
  const parsed = PgSchemaName.safeParse(schema);
  if (!parsed.success)
    throw new HostError(ErrorCode.InvalidArgument, `invalid PostgreSQL schema name ${JSON.stringify(schema)}`);
  return parsed.data;
}

/** Removes a `schema` query parameter (ours, not libpq's) from a postgres:// URL. */
/** The session-lock options a journal URL may carry, by query parameter (docs/scaling.md). */
type LockOptions = Pick<
  PostgresJournalOptions,
  "maxSessionLocks" | "sessionLockConnections" | "sessionLeaseMs" | "sessionHandoverMs"
>;
const LOCK_URL_PARAMS: Readonly<Record<string, keyof LockOptions>> = {
  max_session_locks: "maxSessionLocks",
  session_lock_connections: "sessionLockConnections",
  session_lease_ms: "sessionLeaseMs",
  session_handover_ms: "sessionHandoverMs",
};

/**
 * Takes harnesshost's own query parameters off a journal URL — `schema` and the session-lock options
 * (`session_lease_ms=0`, …) — so `serve --journal URL` can set them; the rest goes to the driver.
 * A lock parameter that is not a decimal integer is INVALID_ARGUMENT naming it.
 */
function splitUrlParams(url: string): { url: string; schema: string | undefined; lockOptions: LockOptions } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, schema: undefined, lockOptions: {} };
  }
  const lockOptions: { -readonly [K in keyof LockOptions]: number } = {};
  let changed = false;
  for (const [param, option] of Object.entries(LOCK_URL_PARAMS)) {
    const text = parsed.searchParams.get(param);
    if (text === null) continue;
    if (!/^\d{1,15}$/.test(text))
      throw new HostError(
        ErrorCode.InvalidArgument,
        `journal URL parameter ${param} must be a whole number, got ${JSON.stringify(text)}`,
      );
    lockOptions[option] = Number(text);
    parsed.searchParams.delete(param);
    changed = true;
  }
  const schema = parsed.searchParams.get("schema") ?? undefined;
  if (schema !== undefined) {
    parsed.searchParams.delete("schema");
    changed = true;
  }
  return { url: changed ? parsed.toString() : url, schema, lockOptions };
}

/** The options given, without the ones left undefined (so they do not mask the URL's). */
function definedOnly(opts: PostgresJournalOptions): LockOptions {
  const out: { -readonly [K in keyof LockOptions]: number } = {};
  for (const option of Object.values(LOCK_URL_PARAMS)) {
    const value = opts[option];
    if (value !== undefined) out[option] = value;
  }
  return out;
}

/** `value` (or `fallback` when absent) as a whole number of at least `min`; INVALID_ARGUMENT otherwise. */
function wholeAtLeast(min: 0 | 1, value: number | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min)
    throw new HostError(
      ErrorCode.InvalidArgument,
      `${what} must be a ${min === 0 ? "non-negative" : "positive"} integer, got ${value}`,
    );
  return value;
}

/** The pool settings shared by the journal pool and the session-lock pool: URL plus per-connection search_path. */
function poolConfig(url: string, schema: string | undefined): pg.PoolConfig {
  const config: pg.PoolConfig = { connectionString: url };
  if (schema !== undefined) {
    const setPath = `SET search_path TO ${quoteIdent(schema)}`;
    config.onConnect = async (client: pg.ClientBase) => {
      await client.query(setPath);
    };
  }
  return config;
}

function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^E[A-Z]+$/.test(code);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
