// The values the journal stores and answers (docs/protocol.md §5): records and heads, session metadata,
// listing pages, verify outcomes, harness registrations, checkpoint rows and verified positions. Plain
// data only; the contract that passes them around is in facets.ts.
import type { Event, IdentityRef, Origin } from "../gen/agentsessions/v1/common_pb.js";
import type { SessionPin } from "./pin.js";

export type { PinnedSession, SessionPin } from "./pin.js";

/** Receives each record a verify walk checked, decoded, in seq order (Journal.verify). */
export type VerifiedRecordSink = (record: JournalRecord) => void;

/** A committed event. `seq` is dense from 1; `prevHash` is "" at seq 1. */
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
  /** The encoded projection through `seq` (src/projection/codec.ts). */
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
