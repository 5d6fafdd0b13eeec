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

export interface SessionsApi {
  exec(p: {
    session?: string;
    harness?: string;
    inputs: readonly string[];
    expectedLastSeq?: number;
    onDelta?: (chunk: string) => void;
  }): Promise<ExecOutcome>;
  /** Re-executes (in process) or re-reads (remote) the session's turns; returns the outputs. */
  replay(session: string): Promise<{ outputs: string[]; modelCalls: number }>;
  records(session: string): AsyncIterable<LogRecord>;
  fork(p: { session: string; atSeq: number; count: number }): Promise<Session[]>;
  get(session: string): Promise<Session>;
  list(p: { project: string; pageSize: number }): Promise<Session[]>;
  suspend(session: string): Promise<SuspendOutcome>;
  resume(session: string): Promise<Session>;
  close(): Promise<void>;
}
