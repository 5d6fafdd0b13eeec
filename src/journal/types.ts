// The Journal contract (docs/protocol.md §5): per-session, append-only, dense, hash-chained, fenced records plus
// the session metadata and harness registrations that live in the same database. Every backend
// (memory, SQLite, PostgreSQL) implements exactly this and passes the same conformance suite
// (test/journal/conformance.ts), so callers never care which one they hold.
import type { Event, IdentityRef, Origin } from "../gen/agentsessions/v1/common_pb.js";
import type { PinnedSession, SessionPin } from "./pin.js";

export type { PinnedSession, SessionPin } from "./pin.js";

/** A committed event. `seq` is dense from 1; `prevHash` is "" at seq 1. */
/** Receives each record a verify walk checked, decoded, in seq order (Journal.verify). */
export type VerifiedRecordSink = (record: JournalRecord) => void;

export interface JournalRecord {
  readonly seq: number;
  readonly prevHash: string;
  readonly contentHash: string;
  readonly fence: number;
  readonly event: Event;
}

export interface Head {
  /** 0 for an empty session. */
  readonly seq: number;
  /** "" for an empty session. */
  readonly hash: string;
}

/** The compute-state projection maintained in the append transaction (reference semantics). */
export type ComputeStateName = "NONE" | "LIVE" | "WARM" | "COLD" | "TERMINATED";

export interface SessionMetaInput {
  readonly uid: string;
  readonly project: string;
  readonly name?: string;
  readonly harness: string;
  readonly model?: string;
  readonly parentUid?: string;
  readonly forkSeq?: number;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly origin?: Origin;
  readonly identity?: IdentityRef;
  /** A fork child's: who forked it, the actor of its LIFECYCLE_FORK marker (not stored on the row). */
  readonly forkedBy?: IdentityRef;
}

export interface SessionInfo {
  readonly uid: string;
  readonly project: string;
  readonly name: string;
  readonly harness: string;
  readonly model: string;
  readonly parentUid: string;
  readonly forkSeq: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly origin?: Origin;
  readonly identity?: IdentityRef;
  /** Milliseconds since the epoch. */
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
  readonly lastSeq: number;
  readonly lastHash: string;
  readonly fence: number;
  readonly computeState: ComputeStateName;
  /**
   * The harness version (and build digest) the session is pinned to (docs/versioning.md), kept by the
   * append transaction from the pin projection (src/journal/pin.ts); absent before the first turn.
   */
  readonly pin?: SessionPin;
}

/** The cross-host session locks a process holds (Journal.sessionLockCounts). */
export interface SessionLockCounts {
  readonly inUse: number;
  readonly parked: number;
}

export interface ListSessionsQuery {
  /** Exact match; "" means "default". */
  readonly project: string;
  /** 0 means 50; clamped to 500. */
  readonly pageSize: number;
  /** Opaque keyset cursor from a previous page; "" for the first page (send the same filters with it). */
  readonly pageToken: string;
  /** Only sessions of this harness ("" or absent: any). */
  readonly harness?: string;
  /** Only sessions in one of these compute states (absent or empty: any). */
  readonly computeStates?: readonly ComputeStateName[];
  /** Only fork children of this session ("" or absent: any); backends answer it from an index. */
  readonly parentUid?: string;
}

export interface SessionPage {
  readonly sessions: readonly SessionInfo[];
  /** "" on the last page. */
  readonly nextPageToken: string;
}

/** Outcome of verifying one session's chain. */
export type VerifyResult =
  | { readonly ok: true; readonly session: string; readonly records: number; readonly head: Head }
  | {
      readonly ok: false;
      readonly session: string;
      /**
       * tampered: a stored hash or prev link does not match the recomputation;
       * undecodable: a stored event cannot be decoded or canonicalised;
       * gap: seqs are not dense; truncated: records end before the session's recorded head;
       * unreadable: the storage holding the record cannot be read (a corrupt database page).
       */
      readonly kind: "tampered" | "undecodable" | "gap" | "truncated" | "unreadable";
      /** The first bad seq. */
      readonly seq: number;
      readonly message: string;
    };

export type RegistrationState = "active" | "retired";

/** A stored harness registration. `spec` is the canonical proto3-JSON text of the HarnessSpec. */
export interface StoredRegistration {
  readonly name: string;
  readonly uid: string;
  readonly spec: string;
  readonly specDigest: string;
  readonly state: RegistrationState;
  readonly retireReason: string;
  readonly retiredAtMs: number;
  readonly createdAtMs: number;
  readonly updatedAtMs: number;
}

/** A memory-actor checkpoint bound to the journal position it captures (docs/protocol.md §9.4). */
export interface CheckpointRow {
  readonly session: string;
  /** seq of the END (or SUSPEND) record the state corresponds to. */
  readonly seq: number;
  /** content_hash of that record; a restore refuses a binding that no longer matches the journal. */
  readonly contentHash: string;
  /** "sha256:<hex>" of the snapshot blob. */
  readonly digest: string;
  readonly createdAtMs: number;
}

/**
 * A session's verified position (docs/protocol.md §5.9): the seq and content_hash a host's chain check
 * verified the session through, and the session-log projection folded over records 1..seq, so a later
 * first touch verifies and folds only the records after it. Written by placement, trusted by nobody:
 * a reader checks it against the record at `seq` and refuses it (full walk) on any mismatch.
 */
export interface VerifiedPosition {
  readonly session: string;
  readonly seq: number;
  /** content_hash of the record at `seq`. */
  readonly hash: string;
  /** The encoded projection through `seq` (src/controller/projection-codec.ts). */
  readonly projection: Uint8Array;
  /** "sha256:<hex>" over seq, hash and projection (src/journal/verified-position.ts). */
  readonly digest: string;
  readonly createdAtMs: number;
}

/** What `appendUnderNewFence` committed: the fence it minted and the records written under it. */
export interface FencedAppend {
  readonly fence: number;
  readonly records: JournalRecord[];
}

export interface FencedAppendOptions {
  /**
   * Also store the checkpoint row binding this blob digest ("sha256:<hex>") to the last appended
   * record, in the same transaction. The caller must have stored the blob durably first.
   */
  readonly checkpointDigest?: string;
}

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

/** A session brought in from another store (`Journal.importSession`): its metadata as recorded there. */
export interface ImportedSessionMeta extends SessionMetaInput {
  /** Milliseconds since the epoch, as the source recorded it. */
  readonly createdAtMs: number;
  /** The source's current fence for the session (at least every record's fence). */
  readonly fence: number;
}

/** One child of `Journal.forkAll`. */
export interface ForkChild {
  readonly meta: SessionMetaInput;
  /** Also store a checkpoint row binding this blob digest to the child's fork marker. */
  readonly checkpointDigest?: string;
}

/** A journal record's position and event, without its chain fields (see Journal.readEvents). */
export interface SeqEvent {
  readonly seq: number;
  readonly event: Event;
}

/**
 * What a journal's storage offers beside its records, declared by each backend so that the host and the
 * servers ask for a capability instead of a backend's name. (Cross-host session locks are the optional
 * `tryLockSession`.)
 */
export interface StorageCapabilities {
  /**
   * Several hosts may share this journal (one database): each re-reads the stored harness registrations
   * periodically (docs/protocol.md §7.4) instead of only at start.
   */
  readonly sharedByHosts: boolean;
  /**
   * Snapshot blobs live in the journal's own database, so every host sharing it reads them
   * (src/snapshot/pg-store.ts); false: under each host's data directory.
   */
  readonly snapshotsInJournal: boolean;
}

/** A cross-host cancel request (Journal.requestCancel). */
export interface CancelRequest {
  readonly session: string;
  readonly reason: string;
}

export interface Journal {
  /** Backend name for diagnostics only: "memory", "sqlite", "postgres". Ask `storage`, never this. */
  readonly kind: string;

  readonly storage: StorageCapabilities;

  /**
   * Appends one event in one transaction. Checks, in order: CAS (`expectedLastSeq` must equal the
   * head, else HostError Conflict), then fence (`fence < current` is HostError Fenced). Creates the
   * session row if missing (project "default"). Updates the compute-state projection.
   */
  append(session: string, expectedLastSeq: number, fence: number, event: Event): Promise<JournalRecord>;

  /** Like append for several events chained in order, atomically: all or none. */
  appendBatch(
    session: string,
    expectedLastSeq: number,
    fence: number,
    events: readonly Event[],
  ): Promise<JournalRecord[]>;

  /** Increments and returns the session's fence (the first is 1). Creates the session row if missing. */
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

  /**
   * Creates the session `meta.uid` holding `records` verbatim (seqs, prev links, hashes and fences as
   * given; the caller has verified the chain), with the given fence and creation time, in ONE
   * transaction: all or none. HostError AlreadyExists when the uid exists; records must be dense from 1.
   */
  importSession(meta: ImportedSessionMeta, records: readonly JournalRecord[]): Promise<SessionInfo>;

  /** HostError AlreadyExists when the uid exists. */
  createSession(meta: SessionMetaInput): Promise<SessionInfo>;
  getSession(uid: string): Promise<SessionInfo | undefined>;
  listSessions(query: ListSessionsQuery): Promise<SessionPage>;

  /** Optional: how many sessions are in each compute state (every project; for the sessions gauge). */
  countByComputeState?(): Promise<Partial<Record<ComputeStateName, number>>>;
  /**
   * Every session pinned to a version of `harness` (its row's pin, indexed), ordered by uid: what
   * `harness list` counts and a version retirement refuses on (docs/versioning.md).
   */
  pinnedSessions(harness: string): Promise<PinnedSession[]>;
  /** Every session uid, for verify-all and export. */
  allSessionUids(): Promise<string[]>;

  putRegistration(reg: StoredRegistration): Promise<void>;
  getRegistration(name: string): Promise<StoredRegistration | undefined>;
  listRegistrations(): Promise<StoredRegistration[]>;
  /** Deletes the registration `name` if it still has `uid` (a newer one is kept); true when deleted. */
  deleteRegistration(name: string, uid: string): Promise<boolean>;

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
   * Reads every stored page once and resolves when all of it is readable; rejects with what a read of
   * unreadable storage throws (isJournalUnreadable) otherwise. Costs a pass over the store, so it is
   * run only while health reports the journal unreadable, to find out when that stopped being true.
   */
  probe(): Promise<void>;

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

  close(): Promise<void>;
}
