// What CLI commands need from a host, whether it runs in this process or behind --server. Invariant:
// every command speaks only this interface, so in-process and remote output are the same documents.
import type { LogRecord } from "../gen/agentsessions/v1/common_pb.js";
import type { Session } from "../gen/agentsessions/v1/session_pb.js";

export interface ExecOutcome {
  readonly session: Session;
  /** Concatenated OUTPUT text of the turn, one line per OUTPUT. */
  readonly output: string;
  readonly lastSeq: number;
  readonly records: readonly LogRecord[];
}

export interface SuspendOutcome {
  readonly session: Session;
  readonly snapshot: { readonly memory: boolean; readonly digest: string; readonly local: string };
}

/** The gate an approve/answer decided, and the committed decision. */
export interface DecisionOutcome {
  readonly session: Session;
  readonly executionId: string;
  readonly toolCallId: string;
  readonly requestSeq: number;
  readonly approved: boolean;
  /** The APPROVAL_RESULT record (an exact retry returns the same one). */
  readonly decision: LogRecord;
}

export interface ResumeOutcome {
  readonly session: Session;
  /** OUTPUT texts the resumed turn committed (none when nothing was pending or it is still parked). */
  readonly outputs: readonly string[];
}

/** What `upgrade` did (docs/versioning.md). */
export interface UpgradeOutcome {
  readonly fromVersion: string;
  readonly toVersion: string;
  /** 0 when the session already was on the version (nothing written). */
  readonly upgradeSeq: number;
  readonly replayedTurns: number;
  readonly snapshot: string;
}

/** A gate named exactly (`approve --execution --tool-call --request-seq`). */
export interface GateTuple {
  readonly executionId: string;
  readonly toolCallId: string;
  readonly requestSeq: number;
}

export interface SessionsApi {
  /** Creates an empty session (no turn yet); project "" is the host's default. */
  create(p: { name: string; harness: string; model: string; project: string }): Promise<Session>;
  exec(p: {
    session?: string;
    harness?: string;
    inputs: readonly string[];
    expectedLastSeq?: number;
    /** Streamed model text, as it arrives (never journaled). */
    onDelta?: (chunk: string) => void;
    /** Each OUTPUT the turn commits, in order, as it is committed. */
    onOutput?: (text: string) => void;
    /** The session's uid as soon as the session exists (before the turn runs). */
    onSession?: (uid: string) => void;
  }): Promise<ExecOutcome>;
  /** Re-executes (in process) or re-reads (remote) the session's turns; returns the outputs. */
  replay(session: string): Promise<{ outputs: string[]; modelCalls: number }>;
  /** The session's records from `fromSeq` (default 1) on, in seq order. */
  records(session: string, fromSeq?: number): AsyncIterable<LogRecord>;
  /** `childNames`: empty, or one name per child. */
  fork(p: { session: string; atSeq: number; count: number; childNames?: readonly string[] }): Promise<Session[]>;
  get(session: string): Promise<Session>;
  /** Every session of the project matching the filters ("" and [] mean any); states are compute-state words. */
  list(p: ListFilter): Promise<Session[]>;
  suspend(session: string): Promise<SuspendOutcome>;
  resume(session: string): Promise<Session>;
  /** Resume, also reporting the outputs the re-driven turn committed. */
  resumeTurn(session: string): Promise<ResumeOutcome>;
  /** Decides the gate `tuple` names, or (without one) the session's pending approval, read from GetSession. */
  approve(p: { session: string; approved: boolean; reason: string; tuple?: GateTuple }): Promise<DecisionOutcome>;
  /** Answers the session's pending question with free text or choice `choice` (1-based). */
  answer(p: { session: string; text?: string; choice?: number }): Promise<DecisionOutcome>;
  /** Cancels the session's turn or withdraws its wait (no-op when there is neither); the session after. */
  cancel(p: { session: string; executionId?: string; reason: string }): Promise<Session>;
  /** Deletes the session for good; the session as it was. */
  delete(session: string): Promise<Session>;
  /** Moves the session to another version of its harness (replay check or memory migration). */
  upgrade(p: { session: string; toVersion: string }): Promise<UpgradeOutcome>;
  close(): Promise<void>;
}

/** `list`'s project, page size and filters (harnesshost.v1.Console.ListSessions's fields). */
export interface ListFilter {
  readonly project: string;
  readonly pageSize: number;
  readonly harness: string;
  readonly states: readonly string[];
  readonly parentUid: string;
  /** Turn statuses (harnesshost.dev/turn `status` words); [] means any. */
  readonly turns: readonly string[];
}
