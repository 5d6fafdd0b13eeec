// Typed errors with stable codes, and the one table that maps each code to what every edge says of it:
// the gRPC status, the HTTP/Connect code and HTTP status, and the CLI's exit status (docs/protocol.md
// §10, docs/cli.md). Invariant: every error that reaches a caller carries a code from ErrorCode, and
// ERROR_TABLE alone decides how each edge reports it — a status read back from another server maps to
// the one row that `reads` it, or (errorCodeOfWire) to the code the peer named when that code's row
// leaves with the same status. This module loads no transport: the gRPC status numbers are the
// protocol's fixed values (GRPC_STATUS), so domain code and the CLI's --help can throw HostErrors
// without loading grpc-js.
import type { status as GrpcStatus } from "@grpc/grpc-js";

/** gRPC status codes by name: the values every gRPC implementation (and Connect) uses. */
const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const satisfies Record<keyof typeof GrpcStatus, number>;

export const ErrorCode = {
  /** Bad arguments: malformed ids, out-of-range counts, invalid specs. */
  InvalidArgument: "invalid_argument",
  /** Unknown session, harness or actor. */
  NotFound: "not_found",
  /** Registration name taken by a different spec or a static harness. */
  AlreadyExists: "already_exists",
  /** CanPlace refused the harness on this runtime (tier mismatch). */
  Unplaceable: "unplaceable",
  /** Any other precondition: retired harness, descriptor mismatch, parked approval, lost RAM state. */
  FailedPrecondition: "failed_precondition",
  /** expected_last_seq did not match the journal head. */
  Conflict: "conflict",
  /** A write under a superseded fence. */
  Fenced: "fenced",
  /** Another operation holds the session. */
  SessionBusy: "session_busy",
  /** Harness unreachable at admission. */
  Unavailable: "unavailable",
  /** The caller's deadline expired. */
  DeadlineExceeded: "deadline_exceeded",
  /** The caller cancelled. */
  Cancelled: "cancelled",
  /** Journal records fail verification, or a snapshot blob is corrupt or missing. */
  DataLoss: "data_loss",
  /** Harness lost or failed mid-turn; the turn is left resumable. */
  Internal: "internal",
  /** Replay or resume saw the harness behave differently from the journal (I0 and friends). */
  Diverged: "diverged",
  Unauthenticated: "unauthenticated",
  PermissionDenied: "permission_denied",
  Unimplemented: "unimplemented",
  /** A request or a peer went past a configured limit (src/limits): too large, too many, too much. */
  ResourceExhausted: "resource_exhausted",
  /** The journal's storage itself cannot be read: a corrupt page or file, an I/O error (UnreadableStorage). */
  StorageUnreadable: "storage_unreadable",
  /** A value with no RFC 8785 canonical JSON form: NaN, undefined, a lone surrogate (NotCanonicalizableError). */
  NotCanonicalizable: "not_canonicalizable",
  /** A conformance check found the harness behaving otherwise than its tier requires (CheckFailure). */
  CheckFailed: "check_failed",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Every error code, in table order (the stable values of HostError.code and of the client's errors). */
export const ERROR_CODES: readonly ErrorCode[] = Object.values(ErrorCode);

/** Whether a string read from outside (a trailer, a header) is one of the error codes. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && (ERROR_CODES as readonly string[]).includes(value);
}

export { redactSecrets, registerSecret } from "./redact.js";

/** The error type every harnesshost module throws for expected failures. */
export class HostError extends Error {
  /** "HostError", or the subclass's own name (UnreadableStorage, NotCanonicalizableError, CheckFailure…). */
  override readonly name: string = "HostError";
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** The INVALID_ARGUMENT HostError every request and input check raises: the message names the field. */
export function invalidArgument(message: string): HostError {
  return new HostError(ErrorCode.InvalidArgument, message);
}

/** The FAILED_PRECONDITION HostError of a state that refuses the operation: the message names the state. */
export function failedPrecondition(message: string): HostError {
  return new HostError(ErrorCode.FailedPrecondition, message);
}

export function isHostError(err: unknown, code?: ErrorCode): err is HostError {
  return err instanceof HostError && (code === undefined || err.code === code);
}

/** A gRPC status name other than OK (the client's `status`, the CLI's --json `code`). */
export type GrpcStatusName = Exclude<keyof typeof GRPC_STATUS, "OK">;

/** Every gRPC status name but OK, in number order: the values a client's `status` can take. */
export const GRPC_STATUS_NAMES = (Object.keys(GRPC_STATUS) as (keyof typeof GRPC_STATUS)[]).filter(
  (name): name is GrpcStatusName => name !== "OK",
);

/** The name of a gRPC status number, or undefined for OK and numbers no gRPC status has. */
export function grpcStatusNameOfNumber(status: number): GrpcStatusName | undefined {
  return GRPC_STATUS_NAMES.find((name) => GRPC_STATUS[name] === status);
}

/** A Connect error code (the `code` of a Connect error body; the gRPC status in Connect's spelling). */
export type ConnectCodeName =
  | "canceled"
  | "unknown"
  | "invalid_argument"
  | "deadline_exceeded"
  | "not_found"
  | "already_exists"
  | "permission_denied"
  | "resource_exhausted"
  | "failed_precondition"
  | "aborted"
  | "out_of_range"
  | "unimplemented"
  | "internal"
  | "unavailable"
  | "data_loss"
  | "unauthenticated";

/** The CLI's exit statuses (docs/cli.md prints them); a failure's status is its code's `exit`. */
export const ExitCode = {
  Ok: 0,
  /** A check or verification found a problem (verify, conformance), or the operation failed inside. */
  Failed: 1,
  /** Bad command-line input, or a request the host rejected as invalid. Nothing was changed. */
  Usage: 2,
  /** No such session, harness, journal or file. */
  NotFound: 3,
  /** Refused by a precondition: tier, parked on a wait, diverged, retired, name taken. */
  Refused: 4,
  /** Busy or aborted: another operation holds the session, a stale expected seq, a limit, a deadline. */
  Busy: 5,
  /** The host could not be reached, or refused the caller's credentials. */
  Unavailable: 6,
  /** Stored records or snapshots fail verification or are missing. */
  DataLoss: 7,
  /**
   * Not a failure: `exec`'s turn parked on an approval or a question (committed; `approve`/`answer`,
   * then `resume`). Distinct from 0 so a script tells parked from completed without a second call.
   */
  Parked: 8,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** How every edge reports one error code. */
export interface ErrorMapping {
  /** The gRPC status it leaves a gRPC listener with (and the client's / CLI's `code`). */
  readonly grpc: GrpcStatusName;
  /** The Connect code it leaves the HTTP listener with. */
  readonly connect: ConnectCodeName;
  /** The HTTP status of that Connect error (the Connect protocol's, e.g. 404 for not_found). */
  readonly http: number;
  /** The CLI's exit status. */
  readonly exit: ExitCode;
  /** The gRPC statuses a client reads back as this code (each status is read by exactly one row). */
  readonly reads: readonly GrpcStatusName[];
}

/** THE table: one row per ErrorCode (test/errors/status-table.test.ts checks it against grpc-js and Connect). */
export const ERROR_TABLE = {
  [ErrorCode.InvalidArgument]: row("INVALID_ARGUMENT", "invalid_argument", 400, ExitCode.Usage, [
    "INVALID_ARGUMENT",
    "OUT_OF_RANGE",
  ]),
  [ErrorCode.NotFound]: row("NOT_FOUND", "not_found", 404, ExitCode.NotFound, ["NOT_FOUND"]),
  [ErrorCode.AlreadyExists]: row("ALREADY_EXISTS", "already_exists", 409, ExitCode.Refused, ["ALREADY_EXISTS"]),
  [ErrorCode.Unplaceable]: row("FAILED_PRECONDITION", "failed_precondition", 400, ExitCode.Refused, []),
  [ErrorCode.FailedPrecondition]: row("FAILED_PRECONDITION", "failed_precondition", 400, ExitCode.Refused, [
    "FAILED_PRECONDITION",
  ]),
  [ErrorCode.Conflict]: row("ABORTED", "aborted", 409, ExitCode.Busy, ["ABORTED"]),
  [ErrorCode.Fenced]: row("ABORTED", "aborted", 409, ExitCode.Busy, []),
  [ErrorCode.SessionBusy]: row("ABORTED", "aborted", 409, ExitCode.Busy, []),
  [ErrorCode.Unavailable]: row("UNAVAILABLE", "unavailable", 503, ExitCode.Unavailable, ["UNAVAILABLE"]),
  [ErrorCode.DeadlineExceeded]: row("DEADLINE_EXCEEDED", "deadline_exceeded", 504, ExitCode.Busy, [
    "DEADLINE_EXCEEDED",
  ]),
  [ErrorCode.Cancelled]: row("CANCELLED", "canceled", 499, ExitCode.Busy, ["CANCELLED"]),
  [ErrorCode.DataLoss]: row("DATA_LOSS", "data_loss", 500, ExitCode.DataLoss, ["DATA_LOSS"]),
  [ErrorCode.Internal]: row("INTERNAL", "internal", 500, ExitCode.Failed, ["INTERNAL", "UNKNOWN"]),
  [ErrorCode.Diverged]: row("FAILED_PRECONDITION", "failed_precondition", 400, ExitCode.Refused, []),
  [ErrorCode.Unauthenticated]: row("UNAUTHENTICATED", "unauthenticated", 401, ExitCode.Unavailable, [
    "UNAUTHENTICATED",
  ]),
  [ErrorCode.PermissionDenied]: row("PERMISSION_DENIED", "permission_denied", 403, ExitCode.Unavailable, [
    "PERMISSION_DENIED",
  ]),
  [ErrorCode.Unimplemented]: row("UNIMPLEMENTED", "unimplemented", 501, ExitCode.Failed, ["UNIMPLEMENTED"]),
  [ErrorCode.ResourceExhausted]: row("RESOURCE_EXHAUSTED", "resource_exhausted", 429, ExitCode.Busy, [
    "RESOURCE_EXHAUSTED",
  ]),
  [ErrorCode.StorageUnreadable]: row("DATA_LOSS", "data_loss", 500, ExitCode.DataLoss, []),
  // INTERNAL, the status such a value always left with: it is the host's or a harness's value, never a request's
  // (a request or event that cannot be canonicalised is refused as invalid_argument where it is read).
  [ErrorCode.NotCanonicalizable]: row("INTERNAL", "internal", 500, ExitCode.Failed, []),
  // Never crosses a wire (the conformance suite runs in process); the CLI's exit 1, "a check found a problem".
  [ErrorCode.CheckFailed]: row("INTERNAL", "internal", 500, ExitCode.Failed, []),
} as const satisfies Record<ErrorCode, ErrorMapping>;

function row(
  grpc: GrpcStatusName,
  connect: ConnectCodeName,
  http: number,
  exit: ExitCode,
  reads: readonly GrpcStatusName[],
): ErrorMapping {
  return { grpc, connect, http, exit, reads };
}

/** The code each gRPC status is read back as (built once from the table's `reads`). */
const READ_AS = new Map<number, ErrorCode>(
  (Object.entries(ERROR_TABLE) as [ErrorCode, ErrorMapping][]).flatMap(([code, m]) =>
    m.reads.map((name) => [GRPC_STATUS[name], code] as const),
  ),
);

/** The gRPC status number of a status name. */
export function grpcStatusNumberOf(name: GrpcStatusName): number {
  return GRPC_STATUS[name];
}

/** The gRPC status of an error code. */
export function grpcStatusOf(code: ErrorCode): GrpcStatus {
  return GRPC_STATUS[ERROR_TABLE[code].grpc] as GrpcStatus;
}

/** The gRPC status name of an error code. */
export function grpcStatusNameOf(code: ErrorCode): GrpcStatusName {
  return ERROR_TABLE[code].grpc;
}

/** The inverse direction, for clients: which code a gRPC status carries (INTERNAL for one no row reads). */
export function errorCodeOfStatus(status: number): ErrorCode {
  return READ_AS.get(status) ?? ErrorCode.Internal;
}

/**
 * The code of a failure read from a peer: the code it names (`claimed`, e.g. the error-code trailer) when
 * that is an ErrorCode whose row leaves with this very status, else the code the status is read as — so
 * a peer can make a code more precise (ABORTED as `fenced`), never contradict its status.
 */
export function errorCodeOfWire(status: number, claimed: unknown): ErrorCode {
  if (isErrorCode(claimed) && GRPC_STATUS[ERROR_TABLE[claimed].grpc] === status) return claimed;
  return errorCodeOfStatus(status);
}

/** The CLI exit status of a failure that arrived as gRPC status `name` (from a server or the host). */
export function exitCodeOfStatus(name: GrpcStatusName): ExitCode {
  return ERROR_TABLE[errorCodeOfStatus(GRPC_STATUS[name])].exit;
}
