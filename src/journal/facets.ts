// The Journal contract (docs/protocol.md §5), by facet: the record log, the session catalog, the harness
// registrations, checkpoints and pins, and cross-host locks — what lives in one journal database. Every
// backend (memory, SQLite, PostgreSQL) implements all of them as `Journal` and passes the same conformance
// suite (test/journal/conformance.ts), so callers never care which one they hold; a caller that needs
// only one facet depends on that facet alone.
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import type {
  CancelRequest,
  CheckpointRow,
  ComputeStateName,
  FencedAppend,
  FencedAppendOptions,
  ForkChild,
  Head,
  ImportedSessionMeta,
  JournalRecord,
  ListSessionsQuery,
  PinnedSession,
  SeqEvent,
  SessionInfo,
  SessionLockCounts,
  SessionMetaInput,
  SessionPage,
  StorageCapabilities,
  StoredRegistration,
  VerifiedPosition,
  VerifiedRecordSink,
  VerifyResult,
} from "./values.js";

/** What every backend is, beside its facets: its name, what its storage offers, a health probe and close. */
export interface JournalStore {
  /** Backend name for diagnostics only: "memory", "sqlite", "postgres". Ask `storage`, never this. */
  readonly kind: string;

  readonly storage: StorageCapabilities;

  /**
   * Reads every stored page once and resolves when all of it is readable; rejects with what a read of
   * unreadable storage throws (isJournalUnreadable) otherwise. Costs a pass over the store, so it is
   * run only while health reports the journal unreadable, to find out when that stopped being true.
   */
  probe(): Promise<void>;

  close(): Promise<void>;
}

/** The record log: per-session, append-only, dense, hash-chained, fenced records — appends (CAS, then fence), fences, reads, verify, and the writes that create a session with records (fork, import). What the turn path, placement and replay use. */
export interface RecordLog {
  /**
   * Appends one event in one transaction. Checks, in order: the session exists (no row — never
   * created, or deleted — is HostError NotFound; a write never creates a row, docs/protocol.md §18
   * rule 8), CAS (`expectedLastSeq` must equal the head, else HostError Conflict), then fence
   * (`fence < current` is HostError Fenced). Updates the compute-state projection.
   */
  append(session: string, expectedLastSeq: number, fence: number, event: Event): Promise<JournalRecord>;

  /** Like append for several events chained in order, atomically: all or none. */
  appendBatch(
    session: string,
    expectedLastSeq: number,
    fence: number,
    events: readonly Event[],
  ): Promise<JournalRecord[]>;

  /** Increments and returns the session's fence (the first is 1); HostError NotFound when the session has no row. */
  newFence(session: string): Promise<number>;

  /**
   * Optional (use `appendUnderNewFence` from this package, which falls back to the separate calls):
   * newFence, then appendBatch of `events` (at least one) under the fence just minted, then — with
   * `checkpointDigest` — putCheckpoint bound to the last record, all in ONE transaction: all or none.
   * CAS as append (Conflict, checked first, and nothing is minted); a freshly minted fence is never stale.
   */
  appendUnderNewFence?(
    session: string,
    expectedLastSeq: number,
    events: readonly Event[],
    opts?: FencedAppendOptions,
  ): Promise<FencedAppend>;

  /** The session's current fence (0 when none was minted). */
  currentFence(session: string): Promise<number>;

  head(session: string): Promise<Head>;

  /** Records with from <= seq <= to (to = 0 or omitted: to the head), in seq order, streamed in pages. */
  read(session: string, from?: number, to?: number): AsyncIterable<JournalRecord>;

  /** The same as read, collected. */
  readRange(session: string, from?: number, to?: number): Promise<JournalRecord[]>;

  /**
   * The same records as readRange without their hashes and fences (seq and decoded event only), for
   * callers that only project events — replay. Same order, same decode errors (DATA_LOSS naming the
   * seq). A backend that can skip reading the chain columns does (SQLite).
   */
  readEvents(session: string, from?: number, to?: number): Promise<SeqEvent[]>;

  /**
   * Encoded event bytes of records 1..through (what a fork copies per child); 0 for an unknown
   * session. Reads sizes, not events.
   */
  recordBytes(session: string, through: number): Promise<number>;

  /**
   * Re-checks dense seqs, prev links, recomputed hashes from decoded events, and the recorded head.
   * `onRecord` receives each record, decoded, in seq order once its link and hash have checked out, so
   * a caller can build on the walk instead of reading the session again; the records it received count
   * as verified only if the result is ok (a walk that fails later has still passed the earlier ones).
   */
  verify(session: string, onRecord?: VerifiedRecordSink): Promise<VerifyResult>;

  /**
   * Creates `child` (metadata from `meta`) whose records 1..atSeq are the parent's, verbatim (same
   * hashes), followed by LIFECYCLE_FORK with detail "parent@<atSeq>" under a freshly minted child
   * fence. atSeq must be 1..head(parent) (HostError InvalidArgument otherwise). One transaction.
   */
  fork(parent: string, child: string, atSeq: number, meta: SessionMetaInput): Promise<JournalRecord[]>;

  /**
   * `fork` of every child (and its checkpoint row, when given) in ONE transaction: afterwards every
   * child exists or none does — a failure or a crash part-way leaves no child behind. Resolves to each
   * child's fork marker, in order.
   */
  forkAll(parent: string, atSeq: number, children: readonly ForkChild[]): Promise<JournalRecord[]>;

  /**
   * Creates the session `meta.uid` holding `records` verbatim (seqs, prev links, hashes and fences as
   * given; the caller has verified the chain), with the given fence and creation time, in ONE
   * transaction: all or none. HostError AlreadyExists when the uid exists; records must be dense from 1.
   */
  importSession(meta: ImportedSessionMeta, records: readonly JournalRecord[]): Promise<SessionInfo>;
}

/** The session catalog: each session's metadata row — create, get, page through, enumerate, delete. */
export interface SessionCatalog {
  /** HostError AlreadyExists when the uid exists. */
  createSession(meta: SessionMetaInput): Promise<SessionInfo>;

  getSession(uid: string): Promise<SessionInfo | undefined>;

  listSessions(query: ListSessionsQuery): Promise<SessionPage>;

  /** Every session uid, for verify-all and export. */
  allSessionUids(): Promise<string[]>;

  /**
   * Removes the session's row if it holds no record at all (a session created for an Exec that was
   * then refused); true when removed. A session with any record is never touched.
   */
  removeEmptySession(uid: string): Promise<boolean>;

  /**
   * Removes the session for good, in ONE transaction: its row, every record and every checkpoint row
   * (so blobs only it referenced become unreferenced for snapshot GC). Fork children are untouched:
   * each holds its own copy of the records it inherited. True when the session existed. The caller
   * must hold the session (no turn running on it): a later append under an old head is refused by CAS.
   */
  deleteSession(uid: string): Promise<boolean>;
}

/** The harness registrations stored beside the sessions (docs/protocol.md §7.4). */
export interface HarnessRegistrations {
  putRegistration(reg: StoredRegistration): Promise<void>;

  getRegistration(name: string): Promise<StoredRegistration | undefined>;

  listRegistrations(): Promise<StoredRegistration[]>;

  /** Deletes the registration `name` if it still has `uid` (a newer one is kept); true when deleted. */
  deleteRegistration(name: string, uid: string): Promise<boolean>;
}

/** What is kept about positions in the log: memory-actor checkpoints bound to a record, verified positions, and the pin and compute-state projections the append transaction keeps on each session row. */
export interface SessionCheckpoints {
  putCheckpoint(row: CheckpointRow): Promise<void>;

  /** The newest checkpoint of the session (highest seq), if any. */
  latestCheckpoint(session: string): Promise<CheckpointRow | undefined>;

  /** Every digest referenced by any checkpoint row (for snapshot garbage collection). */
  checkpointDigests(): Promise<string[]>;

  /**
   * Stores the session's verified position unless the one stored is at the same or a later seq (one
   * row per session; an older write arriving late changes nothing). Removed with the session.
   */
  putVerifiedPosition(row: VerifiedPosition): Promise<void>;

  /** The session's stored verified position, if any (as stored: the reader checks it). */
  verifiedPosition(session: string): Promise<VerifiedPosition | undefined>;

  /**
   * Every session pinned to a version of `harness` (its row's pin, indexed), ordered by uid: what
   * `harness list` counts and a version retirement refuses on (docs/versioning.md).
   */
  pinnedSessions(harness: string): Promise<PinnedSession[]>;

  /** Optional: how many sessions are in each compute state (every project; for the sessions gauge). */
  countByComputeState?(): Promise<Partial<Record<ComputeStateName, number>>>;
}

/** Cross-host coordination, for backends several hosts share (PostgreSQL); every method is optional. */
export interface SessionLocks {
  /**
   * Optional cross-process session lock, for backends several hosts share (PostgreSQL): resolves to a
   * release function, or undefined when another process holds the session. Placement takes it for
   * every session operation, so a second host's concurrent Exec is refused, never interleaved.
   */
  tryLockSession?(session: string): Promise<(() => Promise<void>) | undefined>;

  /**
   * Optional, with tryLockSession: the sessions this process holds locked right now, in use by an
   * operation and parked as leases between operations (PostgreSQL: docs/scaling.md).
   */
  sessionLockCounts?(): SessionLockCounts;

  /**
   * Optional (journals several hosts share): tells every host that has subscribed with
   * `onCancelRequest` that `session`'s running turn is to be cancelled (PostgreSQL: NOTIFY). Delivery
   * is best-effort and only reaches turns running at that moment; the caller repeats it until the
   * session's lock is free (docs/protocol.md §17.2).
   */
  requestCancel?(session: string, reason: string): Promise<void>;

  /**
   * Optional, with requestCancel: calls `listener` for every cancel request any host sends from now
   * on, until the returned function runs (PostgreSQL: LISTEN on one dedicated connection).
   */
  onCancelRequest?(listener: (request: CancelRequest) => void): Promise<() => Promise<void>>;
}

/** The whole contract, as each backend implements it. */
export type Journal = JournalStore &
  RecordLog &
  SessionCatalog &
  HarnessRegistrations &
  SessionCheckpoints &
  SessionLocks;

/**
 * The Journal methods that commit a durable transaction (one fsync on SQLite). Diagnostics, tests and
 * bench/ count calls to these to say how many commits an operation made.
 */
export const DURABLE_JOURNAL_METHODS: readonly string[] = [
  "append",
  "appendBatch",
  "appendUnderNewFence",
  "newFence",
  "putCheckpoint",
  "putVerifiedPosition",
  "fork",
  "forkAll",
  "createSession",
  "removeEmptySession",
  "deleteSession",
  "importSession",
];
