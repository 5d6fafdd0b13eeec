// The Placer's public vocabulary: what it is built from (PlacerDeps) and the request and result of
// each session operation. Invariant: types only — no module of placement depends on another through
// here, so every operation module can name them without importing the facade.
import type { ControllerDeps, TurnObserver, TurnResult } from "../controller/index.js";
import type { ApprovalRef } from "../controller/approvals.js";
import type { EffectDispatcher } from "../effects/dispatcher.js";
import type { IdentityRef, Message } from "../gen/agentsessions/v1/common_pb.js";
import type { Journal, JournalRecord, SessionInfo, SessionMetaInput } from "../journal/types.js";
import type { Limits } from "../limits/index.js";
import type { OpContext } from "../obs/context.js";
import type { Log } from "../obs/log.js";
import type { HostMetrics } from "../obs/metrics.js";
import type { SnapshotRef } from "../runtime/types.js";
import type { HarnessResolver } from "./harness-entry.js";
import type { HistoryCache } from "./history-cache.js";
import type { SessionGuard } from "./session-guard.js";
import type { VerifiedPositionOptions } from "./verified-positions.js";

export interface PlacerDeps extends Omit<ControllerDeps, "observer" | "journal" | "effects" | "parking"> {
  readonly journal: Journal;
  readonly harnesses: HarnessResolver;
  readonly guard?: SessionGuard;
  readonly history?: HistoryCache;
  /**
   * Byte budgets of the caches (historyCacheBytes, recordCacheBytes) and the longest id written whole
   * on a log line (logFieldChars); default: DEFAULT_LIMITS.
   */
  readonly limits?: Pick<Limits, "historyCacheBytes" | "recordCacheBytes"> & Partial<Pick<Limits, "logFieldChars">>;
  /** Handlers of typed effects; without it, emitting an effect refuses the commit. */
  readonly effects?: EffectDispatcher;
  /** Emit `audit.record` for every committed turn, park and decision (needs its handler). */
  readonly auditTurns?: boolean;
  /** Deadline of one turn (ms; limit turnMs); default DEFAULT_NODE_LIMITS.turnMs. */
  readonly turnMs?: number;
  /** How long Cancel waits for a cancelled turn to release its session (ms); default CANCEL_WAIT_MS. */
  readonly cancelWaitMs?: number;
  /** Where placement logs (lines carry request_id, session, harness, turn); default: nowhere. */
  readonly log?: Log;
  /** Where turns, waits, checkpoints and session operations are counted; default: nowhere. */
  readonly metrics?: HostMetrics;
  /**
   * Whether a session's first touch may start from its stored verified position, and how often one is
   * stored (docs/protocol.md §5.9); default: trusted, every VERIFIED_POSITION_EVERY_RECORDS records.
   */
  readonly verifiedPositions?: VerifiedPositionOptions;
}

export interface CancelRequest {
  readonly session: string;
  /** When set, the turn to cancel: a Cancel naming a turn that already ended (or was superseded) is a no-op. */
  readonly executionId?: string;
  readonly reason: string;
  readonly identity?: IdentityRef;
  readonly ctx?: OpContext;
}

/**
 * What Cancel did: stopped a turn running on this host (`cancelled`); asked another host sharing the
 * journal, which then let the session go with nothing left to withdraw (`requested`: its turn
 * stopped or had ended); withdrew a parked turn's wait (`withdrawn`); or found nothing to cancel (`idle`).
 */
export type CancelOutcome = "cancelled" | "requested" | "withdrawn" | "idle";

export interface ExecRequest {
  readonly session: string;
  /** Registry name for this turn; default: the session's harness. */
  readonly harness?: string;
  readonly inputs: readonly Message[];
  readonly expectedLastSeq?: number;
  readonly config?: Uint8Array;
  readonly resumeFromSeq?: number;
  readonly observer?: TurnObserver;
  readonly signal: AbortSignal;
  readonly ctx?: OpContext;
}

export interface SuspendResult {
  readonly record: JournalRecord;
  readonly ref: SnapshotRef;
}

export interface ResumeResult {
  readonly turn: TurnResult | undefined;
  /** The RESUME record; for a (re-)parked session, the newest record (SUSPEND of the park). */
  readonly record: JournalRecord;
  /** Set when the session is (still or again) parked on an approval gate. */
  readonly parked?: ApprovalRef;
}

export interface UpgradeResult {
  readonly from: string;
  readonly to: string;
  /** The upgrade record's seq; 0 when the session already was on the version (nothing written). */
  readonly upgradeSeq: number;
  readonly replayedTurns: number;
  /** Memory tier: the migrated snapshot's digest. */
  readonly snapshot: string;
}

export interface ApproveResult {
  /** The committed APPROVAL_RESULT (an exact retry returns the existing one). */
  readonly record: JournalRecord;
  readonly existing: boolean;
}

export interface ForkRequest {
  readonly parent: string;
  /** 0 = head. */
  readonly atSeq: number;
  /** One entry per child; uid and metadata chosen by the caller. */
  readonly children: readonly SessionMetaInput[];
  readonly signal: AbortSignal;
  readonly ctx?: OpContext;
}

export interface ForkResult {
  readonly children: SessionInfo[];
  readonly atSeq: number;
}
