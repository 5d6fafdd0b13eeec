// The embedded default Journal on better-sqlite3. Invariant: every write is one BEGIN IMMEDIATE
// transaction that checks CAS then fence against the session's head pointer, inserts the chained
// records and moves the head pointer and compute-state projection together, so the head never drifts
// from the records and a crash loses at most the uncommitted transaction. The head lives in a head row
// beside the session's newest record (schema version 2, sqlite-schema.ts), anchored by the session row.
// A record's hashes are stored as sqlite-hash.ts says (32-byte BLOBs when canonical, schema version 4).
// Appends go through a commit queue (commit-queue.ts): appends that arrive together share one
// BEGIN IMMEDIATE … COMMIT (one fsync), each inside its own savepoint so a failing one rolls back alone,
// and none is acknowledged before the COMMIT returns; every other write first commits what is queued.
import { noteEventBytes } from "../wire/event-bytes.js";
import { readFileSync, statSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import Database from "better-sqlite3";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { ErrorCode, HostError } from "../errors/index.js";
import { EventSchema, IdentityRefSchema, OriginSchema, type Event } from "../gen/agentsessions/v1/common_pb.js";
import {
  chainEvents,
  checkAppend,
  forkMarkerEvent,
  requireAppendArgs,
  requireForkRange,
  requireSession,
  verifyChain,
  type StoredRecord,
  UnreadableStorage,
  requireImportable,
} from "./chain.js";
import { parseComputeState, projectComputeState } from "./compute-state.js";
import {
  decodePageToken,
  encodePageToken,
  normalizePageSize,
  normalizeProject,
  READ_PAGE_SIZE,
  sessionFilterOf,
} from "./paging.js";
import { hashColumn, hashText } from "./sqlite-hash.js";
import { copyWithWal } from "./sqlite-wal-copy.js";
import { CommitQueue, type GroupCommitOptions, type QueuedWrite, type WriteOutcome } from "./commit-queue.js";
import { SqliteVerifiedPositions } from "./sqlite-verified.js";
import { type CheckpointStats, WalCheckpointer, type WalCheckpointOptions } from "./sqlite-checkpointer.js";
import { projectPin, projectPins, type PinnedSession, type SessionPin } from "./pin.js";
import {
  implicitRow,
  importedRow,
  pinChanged,
  pinOfColumns,
  rowFromMeta,
  setPin,
  validateMeta,
  type SessionRow,
} from "./session-row.js";
import {
  enableWal,
  HEAD_ROW_SEQ,
  isBusy,
  isPrimaryKeyViolation,
  isUnreadable,
  migrate,
  requireReadableVersion,
} from "./sqlite-schema.js";
import type {
  ImportedSessionMeta,
  CheckpointRow,
  VerifiedPosition,
  ComputeStateName,
  FencedAppend,
  ForkChild,
  FencedAppendOptions,
  Head,
  Journal,
  JournalRecord,
  ListSessionsQuery,
  RegistrationState,
  SeqEvent,
  SessionInfo,
  SessionMetaInput,
  SessionPage,
  StoredRegistration,
  VerifyResult,
  VerifiedRecordSink,
} from "./types.js";

export interface SqliteJournalOptions {
  /** How long a writer waits for another connection's lock (default 5000 ms). */
  readonly busyTimeoutMs?: number;
  /**
   * Open for reading only (verify, replay, export): nothing is created, switched or upgraded, and the
   * file may sit in a read-only directory. Every write fails.
   */
  readonly readOnly?: boolean;
  /**
   * Group commit (default on, `maxBatch` 256 writes): appends, batches and fenced appends that arrive
   * in the same event-loop turn share one transaction and one fsync, instead of one fsync each. Each is
   * still acknowledged only after its COMMIT. `false` commits every append on its own, synchronously
   * inside the call (the one-append-per-fsync baseline the bench measures against).
   */
  readonly groupCommit?: boolean | GroupCommitOptions;
  /**
   * WAL checkpoints (sqlite-checkpointer.ts; default on, 1000 / 4000 pages, 64 commits): while commits
   * carry several writes (group commit under load) copied back into the database by a worker thread
   * instead of inside a COMMIT, the WAL restarted by the writing connection at `resetPages`; for a lone
   * writer SQLite's own auto-checkpoint at `backgroundPages`. `false` leaves SQLite's auto-checkpoint
   * (1000 pages, inside the crossing COMMIT) always.
   */
  readonly walCheckpoint?: boolean | WalCheckpointOptions;
}

interface SessionDbRow {
  uid: string;
  project: string;
  name: string;
  harness: string;
  model: string;
  parent_uid: string;
  fork_seq: number;
  labels: string;
  annotations: string;
  origin: Uint8Array | null;
  identity: Uint8Array | null;
  created_at_ms: number;
  updated_at_ms: number;
  fence: number;
  last_seq: number;
  last_hash: string;
  compute_state: string;
  pin_seq: number;
  pin_harness: string;
  pin_version: string;
  pin_digest: string;
}

interface HeadDbRow {
  fence: number;
  last_seq: number;
  last_hash: string;
  compute_state: string;
  pin_seq: number;
  pin_harness: string;
  pin_version: string;
  pin_digest: string;
  /** 1 when the session has a head row (else the head is the session row's anchor). */
  has_head: number;
}

/** An events row as EVENT_COLUMNS reads it (the hashes as text, whatever their stored form). */
interface EventDbRow {
  seq: number;
  prev_hash: string;
  content_hash: string;
  fence: number;
  event: Uint8Array;
}

interface RegistrationDbRow {
  name: string;
  uid: string;
  spec: string;
  spec_digest: string;
  state: string;
  retire_reason: string;
  retired_at_ms: number;
  created_at_ms: number;
  updated_at_ms: number;
}

interface CheckpointDbRow {
  session: string;
  seq: number;
  content_hash: string;
  digest: string;
  created_at_ms: number;
}

/** A hash as insertEvent binds it (sqlite-hash.ts hashColumn). */
type HashColumn = string | Buffer;

/** An events row's record columns, the hashes read back as text (sqlite-hash.ts). */
const EVENT_COLUMNS = `seq, ${hashText("prev_hash")} AS prev_hash, ${hashText("content_hash")} AS content_hash, fence, event`;

const LAST_SEQ_UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** A session row joined with its head row (schema 2): `FROM` clause for the head columns below. */
const FROM_SESSION_AND_HEAD = `FROM sessions s LEFT JOIN events h ON h.session = s.uid AND h.seq = ${HEAD_ROW_SEQ}`;
/** The session's head: the head row's values win, the session row's anchor stands in without one. */
const HEAD_COLUMNS = `COALESCE(h.head_seq, s.last_seq) AS last_seq, COALESCE(h.head_hash, s.last_hash) AS last_hash`;
/** The session row's pin (src/journal/pin.ts; pin_seq 0: no pin). */
const PIN_COLUMNS = "s.pin_seq, s.pin_harness, s.pin_version, s.pin_digest";
/** A full session row with its head, shaped like SessionDbRow. */
const SESSION_WITH_HEAD = `SELECT s.uid, s.project, s.name, s.harness, s.model, s.parent_uid, s.fork_seq, s.labels, s.annotations,
  s.origin, s.identity, s.created_at_ms, MAX(s.updated_at_ms, COALESCE(h.head_at_ms, 0)) AS updated_at_ms, s.fence,
  ${HEAD_COLUMNS}, COALESCE(h.head_state, s.compute_state) AS compute_state, ${PIN_COLUMNS}
  ${FROM_SESSION_AND_HEAD}`;

function prepareStatements(db: Database.Database) {
  return {
    selectHead: db.prepare<[string], HeadDbRow>(
      `SELECT s.fence AS fence, ${HEAD_COLUMNS}, COALESCE(h.head_state, s.compute_state) AS compute_state,
         ${PIN_COLUMNS}, h.seq IS NOT NULL AS has_head ${FROM_SESSION_AND_HEAD} WHERE s.uid = ?`,
    ),
    selectSession: db.prepare<[string], SessionDbRow>(`${SESSION_WITH_HEAD} WHERE s.uid = ?`),
    insertSession: db.prepare(
      `INSERT INTO sessions (uid, project, name, harness, model, parent_uid, fork_seq, labels, annotations, origin,
         identity, created_at_ms, updated_at_ms, fence, last_seq, last_hash, compute_state, pin_seq, pin_harness,
         pin_version, pin_digest)
       VALUES (@uid, @project, @name, @harness, @model, @parent_uid, @fork_seq, @labels, @annotations, @origin,
         @identity, @created_at_ms, @updated_at_ms, @fence, @last_seq, @last_hash, @compute_state, @pin_seq,
         @pin_harness, @pin_version, @pin_digest)
       ON CONFLICT(uid) DO NOTHING`,
    ),
    /** Moves the head row (created on first use): the newest record's neighbour, so no second page. */
    moveHead: db.prepare<[string, number, string, string, number]>(
      `INSERT INTO events (session, seq, prev_hash, content_hash, fence, event, head_seq, head_hash, head_state, head_at_ms)
       VALUES (?, ${HEAD_ROW_SEQ}, '', '', 0, X'', ?, ?, ?, ?)
       ON CONFLICT(session, seq) DO UPDATE SET head_seq = excluded.head_seq, head_hash = excluded.head_hash,
         head_state = excluded.head_state, head_at_ms = excluded.head_at_ms`,
    ),
    /** The session row's anchor: written by the append that creates the head row. */
    anchorHead: db.prepare<[number, string, string, number, string]>(
      "UPDATE sessions SET last_seq = ?, last_hash = ?, compute_state = ?, updated_at_ms = ? WHERE uid = ?",
    ),
    /** The session row's pin, rewritten only by an append that changes it (a turn's start, an upgrade). */
    writePin: db.prepare<[number, string, string, string, string]>(
      "UPDATE sessions SET pin_seq = ?, pin_harness = ?, pin_version = ?, pin_digest = ? WHERE uid = ?",
    ),
    pinnedSessions: db.prepare<[string], { uid: string; version: string; digest: string }>(
      "SELECT uid, pin_version AS version, pin_digest AS digest FROM sessions WHERE pin_harness = ? AND pin_seq > 0 ORDER BY uid",
    ),
    insertEvent: db.prepare<[string, number, HashColumn, HashColumn, number, Uint8Array]>(
      "INSERT INTO events (session, seq, prev_hash, content_hash, fence, event) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    mintFence: db.prepare<[string, number, number], { fence: number }>(
      `INSERT INTO sessions (uid, project, created_at_ms, updated_at_ms, fence) VALUES (?, 'default', ?, ?, 1)
       ON CONFLICT(uid) DO UPDATE SET fence = sessions.fence + 1, updated_at_ms = excluded.updated_at_ms
       RETURNING fence`,
    ),
    readPage: db.prepare<[string, number, number, number], EventDbRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE session = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?`,
    ),
    /** readPage in raw (array) mode: no per-row object with named keys, for bulk reads. */
    readPageRaw: db
      .prepare<[string, number, number, number], [number, string, string, number, Uint8Array]>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE session = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?`,
      )
      .raw(true),
    readEventsPageRaw: db
      .prepare<[string, number, number, number], [number, Uint8Array]>(
        "SELECT seq, event FROM events WHERE session = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?",
      )
      .raw(true),
    maxSeq: db.prepare<[string], { max_seq: number | null }>(
      `SELECT MAX(seq) AS max_seq FROM events WHERE session = ? AND seq < ${HEAD_ROW_SEQ}`,
    ),
    headAndMax: db.prepare<[string], { last_seq: number; last_hash: string; max_seq: number | null }>(
      `SELECT ${HEAD_COLUMNS}, (SELECT MAX(seq) FROM events e WHERE e.session = s.uid AND e.seq < ${HEAD_ROW_SEQ}) AS max_seq
       ${FROM_SESSION_AND_HEAD} WHERE s.uid = ?`,
    ),
    recordHash: db.prepare<[string, number], { content_hash: string }>(
      `SELECT ${hashText("content_hash")} AS content_hash FROM events WHERE session = ? AND seq = ?`,
    ),
    removeEmptySession: db.prepare<[string, string]>(
      "DELETE FROM sessions WHERE uid = ? AND NOT EXISTS (SELECT 1 FROM events WHERE session = ?)",
    ),
    deleteEvents: db.prepare<[string]>("DELETE FROM events WHERE session = ?"),
    deleteCheckpoints: db.prepare<[string]>("DELETE FROM checkpoints WHERE session = ?"),
    deleteSession: db.prepare<[string]>("DELETE FROM sessions WHERE uid = ?"),
    recordBytes: db.prepare<[string, number], { bytes: number | null }>(
      "SELECT SUM(length(event)) AS bytes FROM events WHERE session = ? AND seq <= ?",
    ),
    copyPrefix: db.prepare<[string, string, number]>(
      "INSERT INTO events (session, seq, prev_hash, content_hash, fence, event) SELECT ?, seq, prev_hash, content_hash, fence, event FROM events WHERE session = ? AND seq <= ?",
    ),
    listFirst: db.prepare<[string, number], SessionDbRow>(
      `${SESSION_WITH_HEAD} WHERE s.project = ? ORDER BY s.created_at_ms DESC, s.uid ASC LIMIT ?`,
    ),
    listAfter: db.prepare<[string, number, number, string, number], SessionDbRow>(
      `${SESSION_WITH_HEAD} WHERE s.project = ? AND (s.created_at_ms < ? OR (s.created_at_ms = ? AND s.uid > ?))
       ORDER BY s.created_at_ms DESC, s.uid ASC LIMIT ?`,
    ),
    allUids: db.prepare<[], { uid: string }>("SELECT uid FROM sessions ORDER BY uid"),
    putRegistration: db.prepare(
      `INSERT INTO harnesses (name, uid, spec, spec_digest, state, retire_reason, retired_at_ms, created_at_ms, updated_at_ms)
       VALUES (@name, @uid, @spec, @spec_digest, @state, @retire_reason, @retired_at_ms, @created_at_ms, @updated_at_ms)
       ON CONFLICT(name) DO UPDATE SET uid = excluded.uid, spec = excluded.spec, spec_digest = excluded.spec_digest,
         state = excluded.state, retire_reason = excluded.retire_reason, retired_at_ms = excluded.retired_at_ms,
         created_at_ms = excluded.created_at_ms, updated_at_ms = excluded.updated_at_ms`,
    ),
    getRegistration: db.prepare<[string], RegistrationDbRow>("SELECT * FROM harnesses WHERE name = ?"),
    deleteRegistration: db.prepare<[string, string]>("DELETE FROM harnesses WHERE name = ? AND uid = ?"),
    listRegistrations: db.prepare<[], RegistrationDbRow>("SELECT * FROM harnesses ORDER BY name"),
    putCheckpoint: db.prepare<[string, number, string, string, number]>(
      `INSERT INTO checkpoints (session, seq, content_hash, digest, created_at_ms) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(session, seq) DO UPDATE SET content_hash = excluded.content_hash, digest = excluded.digest,
         created_at_ms = excluded.created_at_ms`,
    ),
    latestCheckpoint: db.prepare<[string], CheckpointDbRow>(
      "SELECT session, seq, content_hash, digest, created_at_ms FROM checkpoints WHERE session = ? ORDER BY seq DESC LIMIT 1",
    ),
    checkpointDigests: db.prepare<[], { digest: string }>("SELECT DISTINCT digest FROM checkpoints ORDER BY digest"),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

export class SqliteJournal implements Journal {
  readonly kind = "sqlite";
  readonly storage = { sharedByHosts: false, snapshotsInJournal: false } as const;
  private readonly stmts: Statements;
  private readonly commitTx: (
    session: string,
    expectedLastSeq: number,
    fence: number,
    events: readonly Event[],
  ) => JournalRecord[];
  private readonly forkTx: (parent: string, child: string, atSeq: number, meta: SessionMetaInput) => JournalRecord;
  private readonly forkAllTx: (parent: string, atSeq: number, children: readonly ForkChild[]) => JournalRecord[];
  private readonly fencedTx: (
    session: string,
    expectedLastSeq: number,
    events: readonly Event[],
    checkpointDigest: string | undefined,
  ) => FencedAppend;

  /** Undefined when group commit is off: every append is its own transaction. */
  private readonly queue: CommitQueue | undefined;
  private readonly batchTx: (writes: readonly QueuedWrite[]) => WriteOutcome[];
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
    this.commitTx = db.transaction(this.commitInTx.bind(this)).immediate;
    this.forkTx = db.transaction(this.forkInTx.bind(this)).immediate;
    this.forkAllTx = db.transaction((parent: string, atSeq: number, children: readonly ForkChild[]) =>
      children.map((c) => {
        const marker = this.forkInTx(parent, c.meta.uid, atSeq, c.meta);
        if (c.checkpointDigest !== undefined) {
          this.stmts.putCheckpoint.run(c.meta.uid, marker.seq, marker.contentHash, c.checkpointDigest, Date.now());
        }
        return marker;
      }),
    ).immediate;
    this.fencedTx = db.transaction(this.fencedInTx.bind(this)).immediate;
    // Each write of a batch runs in a savepoint (better-sqlite3 nests a transaction function that way):
    // a write that throws is rolled back alone and the batch carries on, unless SQLite rolled back the
    // whole transaction (I/O error, full disk), which then fails every write of the batch.
    this.batchTx = db.transaction((writes: readonly QueuedWrite[]) =>
      writes.map((w): WriteOutcome => {
        try {
          return { ok: true, ...this.writeInTx(w) };
        } catch (err) {
          if (!this.db.inTransaction) throw err;
          return { ok: false, error: mapWriteError(writeLabel(w), err) };
        }
      }),
    ).immediate;
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
    const counts = this.checkpointer?.stats ?? {
      background: 0,
      inline: 0,
      failed: 0,
      lockBusy: 0,
      concurrentSpells: 0,
    };
    const frames = this.checkpointer?.walFrames() ?? { log: 0, checkpointed: 0 };
    return { ...counts, ...frames, concurrent: this.checkpointer?.isConcurrent ?? false };
  }

  /** One write as its own transaction (or, inside the batch transaction, its own savepoint). */
  private writeInTx(w: QueuedWrite): { fence: number; records: JournalRecord[] } {
    switch (w.kind) {
      case "append":
        return { fence: w.fence, records: this.commitTx(w.session, w.expectedLastSeq, w.fence, w.events) };
      case "fenced":
        return this.fencedTx(w.session, w.expectedLastSeq, w.events, w.checkpointDigest);
      default: {
        const never: never = w;
        throw new Error(`unknown queued write ${String(never)}`);
      }
    }
  }

  /** The commit queue's runner: a lone write is its own transaction, several share one. */
  private runBatch(writes: readonly QueuedWrite[]): WriteOutcome[] {
    const [only] = writes;
    if (writes.length === 1 && only !== undefined) {
      try {
        this.live();
        const outcome: WriteOutcome = { ok: true, ...this.writeInTx(only) };
        this.checkpointer?.afterCommit(1);
        return [outcome];
      } catch (error) {
        return [{ ok: false, error: mapWriteError(writeLabel(only), error) }];
      }
    }
    this.live();
    let outcomes: WriteOutcome[];
    try {
      outcomes = this.batchTx(writes);
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
    if (opts.readOnly === true) return SqliteJournal.openReadOnly(path, busyTimeoutMs);
    const db = new Database(path, { timeout: busyTimeoutMs });
    try {
      db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      const mode = enableWal(db, busyTimeoutMs);
      db.pragma("synchronous = FULL");
      migrate(db);
      const journal = new SqliteJournal(db, opts.groupCommit);
      const wal = opts.walCheckpoint ?? true;
      if (wal !== false && !db.memory && mode === "wal") {
        journal.checkpointer = new WalCheckpointer(db, resolvePath(path), busyTimeoutMs, wal === true ? {} : wal);
      }
      return journal;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /**
   * A read-only connection. A WAL-mode file in a directory this process cannot write and without a
   * -shm (none can be made there) is read from an in-memory image of the file when it has no
   * un-checkpointed WAL frames (a cleanly stopped host leaves none), or, with frames left over by an
   * unclean shutdown, from a private copy of the file and its -wal (sqlite-wal-copy.ts), removed on
   * close — never from a stale image. A -shm the unclean shutdown left behind is read as it is.
   */
  private static openReadOnly(path: string, busyTimeoutMs: number): SqliteJournal {
    let db: Database.Database;
    try {
      db = new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
      try {
        db.pragma("user_version", { simple: true });
        db.prepare("SELECT count(*) FROM sqlite_master").get();
      } catch (err) {
        db.close();
        throw err;
      }
    } catch (err) {
      const code = String((err as { code?: unknown }).code ?? "");
      if (!code.startsWith("SQLITE_READONLY") && !code.startsWith("SQLITE_CANTOPEN")) throw err;
      const wal = statSync(`${path}-wal`, { throwIfNoEntry: false });
      if (wal !== undefined && wal.size > 0) return SqliteJournal.openCopy(path, busyTimeoutMs);
      const image = readFileSync(path);
      // Bytes 18 and 19 say WAL; an in-memory image is read with the rollback format (same pages).
      if (image.length > 19) {
        image[18] = 1;
        image[19] = 1;
      }
      db = new Database(image, { readonly: true });
    }
    try {
      requireReadableVersion(db);
      return new SqliteJournal(db, false);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /** A read-only connection to a private copy of the file and its -wal, removed when the journal closes. */
  private static openCopy(path: string, busyTimeoutMs: number): SqliteJournal {
    const copy = copyWithWal(path);
    let db: Database.Database | undefined;
    try {
      db = new Database(copy.path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
      requireReadableVersion(db);
      return new SqliteJournal(db, false, () => copy.remove());
    } catch (err) {
      db?.close();
      copy.remove();
      throw err;
    }
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

  private commit(
    session: string,
    expectedLastSeq: number,
    fence: number,
    events: readonly Event[],
  ): JournalRecord[] | Promise<JournalRecord[]> {
    requireAppendArgs(session, expectedLastSeq, fence);
    this.live();
    if (this.queue !== undefined) return this.queue.append({ kind: "append", session, expectedLastSeq, fence, events });
    return this.write(`append to session ${session}`, () => this.commitTx(session, expectedLastSeq, fence, events));
  }

  private commitInTx(
    session: string,
    expectedLastSeq: number,
    fence: number,
    events: readonly Event[],
  ): JournalRecord[] {
    const row = this.stmts.selectHead.get(session);
    const head: Head = row ? { seq: row.last_seq, hash: row.last_hash } : { seq: 0, hash: "" };
    checkAppend(session, head, expectedLastSeq, fence, row?.fence ?? 0);
    const records = chainEvents(head, fence, events);
    if (records.length === 0) return records;
    const now = Date.now();
    if (!row) this.stmts.insertSession.run(sessionParams(implicitRow(session, now)));
    this.insertAfterHead(session, records, row, now);
    return records;
  }

  /** insertChained onto the session as its head row (absent for a new session) describes it. */
  private insertAfterHead(
    session: string,
    records: readonly JournalRecord[],
    row: HeadDbRow | undefined,
    now: number,
  ): void {
    this.insertChained(
      session,
      records,
      parseComputeState(row?.compute_state ?? "NONE"),
      now,
      row?.has_head === 1,
      pinOfRow(row),
    );
  }

  /** Inserts chained records and moves the head row; the append that creates the head row also anchors it. */
  private insertChained(
    session: string,
    records: readonly JournalRecord[],
    state: ComputeStateName,
    now: number,
    hasHead: boolean,
    pin: SessionPin | undefined,
  ): void {
    let computeState = state;
    for (const r of records) {
      this.stmts.insertEvent.run(
        session,
        r.seq,
        hashColumn(r.prevHash),
        hashColumn(r.contentHash),
        r.fence,
        noteEventBytes(r.event, toBinary(EventSchema, r.event)),
      );
      computeState = projectComputeState(computeState, r.event);
    }
    const last = records[records.length - 1];
    if (last === undefined) return;
    const newPin = projectPins(pin, records);
    if (pinChanged(pin, newPin)) this.writePin(session, newPin);
    this.stmts.moveHead.run(session, last.seq, last.contentHash, computeState, now);
    if (!hasHead) this.stmts.anchorHead.run(last.seq, last.contentHash, computeState, now, session);
  }

  private writePin(session: string, pin: SessionPin | undefined): void {
    this.stmts.writePin.run(pin?.seq ?? 0, pin?.harness ?? "", pin?.version ?? "", pin?.digest ?? "", session);
  }

  async newFence(session: string): Promise<number> {
    requireSession(session);
    const now = Date.now();
    const row = this.write(`mint fence for session ${session}`, () => this.stmts.mintFence.get(session, now, now));
    if (!row) throw new Error("fence mint returned no row");
    return row.fence;
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
      this.fencedTx(session, expectedLastSeq, events, checkpointDigest),
    );
  }

  /** CAS, mint, chain, insert and (optionally) the checkpoint row: one transaction, one WAL commit. */
  private fencedInTx(
    session: string,
    expectedLastSeq: number,
    events: readonly Event[],
    checkpointDigest: string | undefined,
  ): FencedAppend {
    const row = this.stmts.selectHead.get(session);
    const head: Head = row ? { seq: row.last_seq, hash: row.last_hash } : { seq: 0, hash: "" };
    checkAppend(session, head, expectedLastSeq, 0, 0);
    const now = Date.now();
    const minted = this.stmts.mintFence.get(session, now, now);
    if (!minted) throw new Error("fence mint returned no row");
    const records = chainEvents(head, minted.fence, events);
    this.insertAfterHead(session, records, row, now);
    const last = records[records.length - 1];
    if (checkpointDigest !== undefined && last !== undefined) {
      this.stmts.putCheckpoint.run(session, last.seq, last.contentHash, checkpointDigest, now);
    }
    return { fence: minted.fence, records };
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
    for await (const row of this.rows(session, from, to)) {
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
    // The same pages and records as `read`, collected in a plain loop: better-sqlite3 is synchronous,
    // so the async-generator hop per record would only add overhead to a full-session read.
    const out: JournalRecord[] = [];
    let next = Math.max(1, from);
    const last = to > 0 ? to : LAST_SEQ_UNBOUNDED;
    while (next <= last) {
      const page = this.live().stmts.readPageRaw.all(session, next, last, READ_PAGE_SIZE);
      for (let i = 0; i < page.length; i++) {
        const row = page[i]!;
        const seq = row[0];
        const event = decodeBytes(session, seq, row[4]);
        // readRange fills the host caches, whose budgets count encoded bytes: the stored blob is that size.
        noteEventBytes(event, row[4]);
        out.push({ seq, prevHash: row[1], contentHash: row[2], fence: row[3], event });
      }
      const tail = page[page.length - 1];
      if (page.length < READ_PAGE_SIZE || tail === undefined) break;
      next = tail[0] + 1;
    }
    return out;
  }

  async readEvents(session: string, from = 1, to = 0): Promise<SeqEvent[]> {
    // readRange's pages without the chain columns: replay never reads hashes or fences, and building
    // two 64-character strings per record is most of a read's allocation.
    const out: SeqEvent[] = [];
    let next = Math.max(1, from);
    const last = to > 0 ? to : LAST_SEQ_UNBOUNDED;
    while (next <= last) {
      const page = this.live().stmts.readEventsPageRaw.all(session, next, last, READ_PAGE_SIZE);
      for (let i = 0; i < page.length; i++) {
        const row = page[i]!;
        out.push({ seq: row[0], event: decodeBytes(session, row[0], row[1]) });
      }
      const tail = page[page.length - 1];
      if (page.length < READ_PAGE_SIZE || tail === undefined) break;
      next = tail[0] + 1;
    }
    return out;
  }

  /** Raw rows in seq order, one bounded query per page, so a long session is never loaded at once. */
  private async *rows(session: string, from: number, to: number): AsyncIterable<EventDbRow> {
    let next = Math.max(1, from);
    const last = to > 0 ? to : LAST_SEQ_UNBOUNDED;
    while (next <= last) {
      const page = this.live().stmts.readPage.all(session, next, last, READ_PAGE_SIZE);
      for (const row of page) yield row;
      const tail = page[page.length - 1];
      if (page.length < READ_PAGE_SIZE || tail === undefined) return;
      next = tail.seq + 1;
    }
  }

  async verify(session: string, onRecord?: VerifiedRecordSink): Promise<VerifyResult> {
    // One statement reads the head pointer and the highest stored seq from the same snapshot, so an
    // append racing this walk is never mistaken for a record past the head.
    let pointer: ReturnType<Statements["headAndMax"]["get"]>;
    try {
      pointer = this.live().stmts.headAndMax.get(session);
    } catch (err) {
      if (!isUnreadable(err)) throw err;
      const message = `session ${session}: its head cannot be read: ${(err as Error).message}`;
      return { ok: false, session, kind: "unreadable", seq: 1, message };
    }
    const recorded: Head = pointer ? { seq: pointer.last_seq, hash: pointer.last_hash } : { seq: 0, hash: "" };
    const stray = pointer ? pointer.max_seq : this.stmts.maxSeq.get(session)?.max_seq;
    if (stray !== null && stray !== undefined && stray > recorded.seq) {
      return {
        ok: false,
        session,
        kind: "tampered",
        seq: recorded.seq + 1,
        message: `session ${session}: seq ${stray} lies beyond the recorded head seq ${recorded.seq}`,
      };
    }
    const last = Math.max(recorded.seq, 1);
    const rowsFrom = (from: number, to: number) => this.rows(session, from, to);
    // A page of rows that cannot be read is re-read one record at a time, so the first unreadable seq
    // is the one named.
    async function* stored(): AsyncIterable<StoredRecord> {
      let next = 1;
      const asStored = (row: EventDbRow): StoredRecord => ({
        seq: row.seq,
        prevHash: row.prev_hash,
        contentHash: row.content_hash,
        fence: row.fence,
        decode: () => fromBinary(EventSchema, row.event),
      });
      try {
        for await (const row of rowsFrom(1, last)) {
          if (row.seq > recorded.seq) return;
          next = row.seq + 1;
          yield asStored(row);
        }
        return;
      } catch (err) {
        if (!isUnreadable(err)) throw err;
      }
      for (let seq = next; seq <= last; seq++) {
        try {
          for await (const row of rowsFrom(seq, seq)) yield asStored(row);
        } catch (err) {
          if (isUnreadable(err)) throw new UnreadableStorage((err as Error).message);
          throw err;
        }
      }
    }
    return verifyChain(session, stored(), recorded, onRecord);
  }

  async fork(parent: string, child: string, atSeq: number, meta: SessionMetaInput): Promise<JournalRecord[]> {
    requireSession(parent);
    requireSession(child);
    this.write(`fork session ${parent} into ${child}`, () => this.forkTx(parent, child, atSeq, meta));
    return this.readRange(child);
  }

  async forkAll(parent: string, atSeq: number, children: readonly ForkChild[]): Promise<JournalRecord[]> {
    requireSession(parent);
    for (const c of children) requireSession(c.meta.uid);
    return this.write(`fork session ${parent} into ${children.length} children`, () =>
      this.forkAllTx(parent, atSeq, children),
    );
  }

  private forkInTx(parent: string, child: string, atSeq: number, meta: SessionMetaInput): JournalRecord {
    const source = this.stmts.selectHead.get(parent);
    if (!source) throw new HostError(ErrorCode.NotFound, `session ${parent} not found`);
    requireForkRange(parent, atSeq, { seq: source.last_seq, hash: source.last_hash });
    if (this.stmts.selectHead.get(child))
      throw new HostError(ErrorCode.AlreadyExists, `session ${child} already exists`);
    const forkPoint = this.stmts.recordHash.get(parent, atSeq);
    if (!forkPoint) throw new HostError(ErrorCode.DataLoss, `session ${parent}: record seq ${atSeq} is missing`);
    const childFence = 1;
    const marker = chainEvents({ seq: atSeq, hash: forkPoint.content_hash }, childFence, [
      forkMarkerEvent(atSeq, meta.forkedBy),
    ]);
    const now = Date.now();
    const row = rowFromMeta({ ...meta, uid: child, parentUid: meta.parentUid ?? parent, forkSeq: atSeq }, now);
    row.fence = childFence;
    setPin(row, atSeq === source.last_seq ? pinOfRow(source) : this.pinThrough(parent, atSeq));
    this.stmts.insertSession.run(sessionParams(row));
    const copied = this.stmts.copyPrefix.run(child, parent, atSeq).changes;
    if (copied !== atSeq) {
      throw new HostError(ErrorCode.DataLoss, `session ${parent}: expected ${atSeq} records to fork, found ${copied}`);
    }
    this.insertChained(child, marker, "NONE", now, false, row.pin);
    const [record] = marker;
    if (record === undefined) throw new Error("fork marker was not chained");
    return record;
  }

  async removeEmptySession(uid: string): Promise<boolean> {
    return this.write(`remove empty session ${uid}`, () => this.stmts.removeEmptySession.run(uid, uid).changes > 0);
  }

  async deleteSession(uid: string): Promise<boolean> {
    return this.write(`delete session ${uid}`, () =>
      this.db
        .transaction(() => {
          this.stmts.deleteEvents.run(uid);
          this.stmts.deleteCheckpoints.run(uid);
          this.positions.remove(uid);
          return this.stmts.deleteSession.run(uid).changes > 0;
        })
        .immediate(),
    );
  }

  async importSession(meta: ImportedSessionMeta, records: readonly JournalRecord[]): Promise<SessionInfo> {
    requireImportable(meta, records);
    const row = importedRow(meta);
    this.write(`import session ${meta.uid}`, () =>
      this.db
        .transaction(() => {
          if (this.stmts.insertSession.run(sessionParams(row)).changes === 0)
            throw new HostError(ErrorCode.AlreadyExists, `session ${meta.uid} already exists`);
          this.insertChained(meta.uid, records, "NONE", Date.now(), false, undefined);
        })
        .immediate(),
    );
    const info = await this.getSession(meta.uid);
    if (info === undefined) throw new Error(`session ${meta.uid} vanished after import`);
    return info;
  }

  async createSession(meta: SessionMetaInput): Promise<SessionInfo> {
    validateMeta(meta);
    const row = rowFromMeta(meta, Date.now());
    const inserted = this.write(
      `create session ${meta.uid}`,
      () => this.stmts.insertSession.run(sessionParams(row)).changes,
    );
    if (inserted === 0) throw new HostError(ErrorCode.AlreadyExists, `session ${meta.uid} already exists`);
    return row;
  }

  async getSession(uid: string): Promise<SessionInfo | undefined> {
    const row = this.live().stmts.selectSession.get(uid);
    return row ? sessionInfoOf(row) : undefined;
  }

  async listSessions(query: ListSessionsQuery): Promise<SessionPage> {
    const project = normalizeProject(query.project);
    const size = normalizePageSize(query.pageSize);
    const cursor = decodePageToken(query.pageToken);
    const filter = sessionFilterOf(query);
    const { stmts, db } = this.live();
    let rows: SessionDbRow[];
    if (filter.harness === undefined && filter.parentUid === undefined && filter.states === undefined) {
      rows = cursor
        ? stmts.listAfter.all(project, cursor.createdAtMs, cursor.createdAtMs, cursor.uid, size + 1)
        : stmts.listFirst.all(project, size + 1);
    } else {
      const where = ["s.project = ?"];
      const params: (string | number)[] = [project];
      if (filter.harness !== undefined) {
        where.push("s.harness = ?");
        params.push(filter.harness);
      }
      if (filter.parentUid !== undefined) {
        where.push("s.parent_uid = ?");
        params.push(filter.parentUid);
      }
      if (filter.states !== undefined) {
        where.push(`COALESCE(h.head_state, s.compute_state) IN (${filter.states.map(() => "?").join(", ")})`);
        params.push(...filter.states);
      }
      if (cursor) {
        where.push("(s.created_at_ms < ? OR (s.created_at_ms = ? AND s.uid > ?))");
        params.push(cursor.createdAtMs, cursor.createdAtMs, cursor.uid);
      }
      params.push(size + 1);
      const sql = `${SESSION_WITH_HEAD} WHERE ${where.join(" AND ")} ORDER BY s.created_at_ms DESC, s.uid ASC LIMIT ?`;
      rows = this.filteredList(db, sql).all(...params);
    }
    const page = rows.slice(0, size).map(sessionInfoOf);
    const last = page[page.length - 1];
    const nextPageToken =
      rows.length > size && last ? encodePageToken({ createdAtMs: last.createdAtMs, uid: last.uid }) : "";
    return { sessions: page, nextPageToken };
  }

  /** Filtered ListSessions statements, one per filter shape (at most 2 × 2 × 5 × 2 shapes). */
  private readonly filteredLists = new Map<string, Database.Statement<(string | number)[], SessionDbRow>>();

  private filteredList(db: Database.Database, sql: string): Database.Statement<(string | number)[], SessionDbRow> {
    let stmt = this.filteredLists.get(sql);
    if (stmt === undefined) {
      stmt = db.prepare<(string | number)[], SessionDbRow>(sql);
      this.filteredLists.set(sql, stmt);
    }
    return stmt;
  }

  async countByComputeState(): Promise<Partial<Record<ComputeStateName, number>>> {
    const rows = this.live()
      .db.prepare("SELECT compute_state AS state, count(*) AS n FROM sessions GROUP BY compute_state")
      .all() as { state: ComputeStateName; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  /** The pin a fork child inherits: the parent's records 1..atSeq folded (a fork below the head). */
  private pinThrough(session: string, atSeq: number): SessionPin | undefined {
    let pin: SessionPin | undefined;
    let next = 1;
    while (next <= atSeq) {
      const page = this.stmts.readEventsPageRaw.all(session, next, atSeq, READ_PAGE_SIZE);
      for (const row of page) pin = projectPin(pin, row[0], decodeBytes(session, row[0], row[1]));
      const tail = page[page.length - 1];
      if (page.length < READ_PAGE_SIZE || tail === undefined) break;
      next = tail[0] + 1;
    }
    return pin;
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
    this.write(`store registration ${reg.name}`, () =>
      this.stmts.putRegistration.run({
        name: reg.name,
        uid: reg.uid,
        spec: reg.spec,
        spec_digest: reg.specDigest,
        state: reg.state,
        retire_reason: reg.retireReason,
        retired_at_ms: reg.retiredAtMs,
        created_at_ms: reg.createdAtMs,
        updated_at_ms: reg.updatedAtMs,
      }),
    );
  }

  async getRegistration(name: string): Promise<StoredRegistration | undefined> {
    const row = this.live().stmts.getRegistration.get(name);
    return row ? registrationOf(row) : undefined;
  }

  async deleteRegistration(name: string, uid: string): Promise<boolean> {
    return this.write(`delete registration ${name}`, () => this.stmts.deleteRegistration.run(name, uid).changes > 0);
  }

  async listRegistrations(): Promise<StoredRegistration[]> {
    return this.live().stmts.listRegistrations.all().map(registrationOf);
  }

  async putCheckpoint(row: CheckpointRow): Promise<void> {
    this.write(`store checkpoint ${row.session}@${row.seq}`, () =>
      this.stmts.putCheckpoint.run(row.session, row.seq, row.contentHash, row.digest, row.createdAtMs),
    );
  }

  async latestCheckpoint(session: string): Promise<CheckpointRow | undefined> {
    const row = this.live().stmts.latestCheckpoint.get(session);
    return row
      ? {
          session: row.session,
          seq: row.seq,
          contentHash: row.content_hash,
          digest: row.digest,
          createdAtMs: row.created_at_ms,
        }
      : undefined;
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

  private live(): this {
    if (!this.db.open) throw new HostError(ErrorCode.FailedPrecondition, "journal is closed");
    return this;
  }
}

/** A primary-key race is Conflict, an exhausted busy wait SessionBusy; HostErrors and the rest pass through. */
function mapWriteError(what: string, err: unknown): unknown {
  if (err instanceof HostError) return err;
  if (isPrimaryKeyViolation(err)) {
    return new HostError(ErrorCode.Conflict, `${what}: seq conflict (a concurrent writer committed first)`, {
      cause: err,
    });
  }
  if (isBusy(err)) return new HostError(ErrorCode.SessionBusy, `${what}: database is locked`, { cause: err });
  return err;
}

function writeLabel(w: QueuedWrite): string {
  return w.kind === "append" ? `append to session ${w.session}` : `append to session ${w.session} under a new fence`;
}

function decodeStored(session: string, row: EventDbRow): Event {
  return decodeBytes(session, row.seq, row.event);
}

function decodeBytes(session: string, seq: number, bytes: Uint8Array): Event {
  try {
    return fromBinary(EventSchema, bytes);
  } catch (err) {
    throw new HostError(ErrorCode.DataLoss, `session ${session}: event at seq ${seq} cannot be decoded`, {
      cause: err,
    });
  }
}

function sessionParams(row: SessionRow): Record<string, string | number | Uint8Array | null> {
  return {
    uid: row.uid,
    project: row.project,
    name: row.name,
    harness: row.harness,
    model: row.model,
    parent_uid: row.parentUid,
    fork_seq: row.forkSeq,
    labels: JSON.stringify(row.labels),
    annotations: JSON.stringify(row.annotations),
    origin: row.origin ? toBinary(OriginSchema, row.origin) : null,
    identity: row.identity ? toBinary(IdentityRefSchema, row.identity) : null,
    created_at_ms: row.createdAtMs,
    updated_at_ms: row.updatedAtMs,
    fence: row.fence,
    last_seq: row.lastSeq,
    last_hash: row.lastHash,
    compute_state: row.computeState,
    pin_seq: row.pin?.seq ?? 0,
    pin_harness: row.pin?.harness ?? "",
    pin_version: row.pin?.version ?? "",
    pin_digest: row.pin?.digest ?? "",
  };
}

function pinOfRow(row: HeadDbRow | SessionDbRow | undefined): SessionPin | undefined {
  return row ? pinOfColumns(row.pin_seq, row.pin_harness, row.pin_version, row.pin_digest) : undefined;
}

function sessionInfoOf(row: SessionDbRow): SessionInfo {
  const info: SessionRow = {
    uid: row.uid,
    project: row.project,
    name: row.name,
    harness: row.harness,
    model: row.model,
    parentUid: row.parent_uid,
    forkSeq: row.fork_seq,
    labels: parseStringMap(row.labels),
    annotations: parseStringMap(row.annotations),
    createdAtMs: row.created_at_ms,
    updatedAtMs: row.updated_at_ms,
    lastSeq: row.last_seq,
    lastHash: row.last_hash,
    fence: row.fence,
    computeState: parseComputeState(row.compute_state),
  };
  setPin(info, pinOfRow(row));
  if (row.origin) info.origin = fromBinary(OriginSchema, row.origin);
  if (row.identity) info.identity = fromBinary(IdentityRefSchema, row.identity);
  return info;
}

function parseStringMap(text: string): Record<string, string> {
  const parsed: unknown = text === "" ? {} : JSON.parse(text);
  const out: Record<string, string> = {};
  if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
    for (const [k, v] of Object.entries(parsed)) if (typeof v === "string") out[k] = v;
  }
  return out;
}

function registrationOf(row: RegistrationDbRow): StoredRegistration {
  return {
    name: row.name,
    uid: row.uid,
    spec: row.spec,
    specDigest: row.spec_digest,
    state: parseRegistrationState(row.state),
    retireReason: row.retire_reason,
    retiredAtMs: row.retired_at_ms,
    createdAtMs: row.created_at_ms,
    updatedAtMs: row.updated_at_ms,
  };
}

function parseRegistrationState(state: string): RegistrationState {
  return state === "retired" ? "retired" : "active";
}
