// Typed errors with stable codes, and the one table that maps them to gRPC statuses (docs/protocol.md §10).
// Invariant: every error that reaches a caller carries a code from ErrorCode; nothing else decides
// which gRPC status a failure gets. This module loads no transport: the gRPC status numbers are the
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
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export { redactSecrets, registerSecret } from "./redact.js";

/** The error type every harnesshost module throws for expected failures. */
export class HostError extends Error {
  override readonly name = "HostError";
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

export function isHostError(err: unknown, code?: ErrorCode): err is HostError {
  return err instanceof HostError && (code === undefined || err.code === code);
}

/** The single mapping from error codes to gRPC statuses. */
export function grpcStatusOf(code: ErrorCode): GrpcStatus {
  return GRPC_STATUS[grpcStatusNameOf(code)] as GrpcStatus;
}

/** The gRPC status name of an error code (also the Connect code, lowercased). */
export function grpcStatusNameOf(code: ErrorCode): Exclude<keyof typeof GRPC_STATUS, "OK"> {
  switch (code) {
    case ErrorCode.InvalidArgument:
      return "INVALID_ARGUMENT";
    case ErrorCode.NotFound:
      return "NOT_FOUND";
    case ErrorCode.AlreadyExists:
      return "ALREADY_EXISTS";
    case ErrorCode.Unplaceable:
    case ErrorCode.FailedPrecondition:
    case ErrorCode.Diverged:
      return "FAILED_PRECONDITION";
    case ErrorCode.Conflict:
    case ErrorCode.Fenced:
    case ErrorCode.SessionBusy:
      return "ABORTED";
    case ErrorCode.Unavailable:
      return "UNAVAILABLE";
    case ErrorCode.DeadlineExceeded:
      return "DEADLINE_EXCEEDED";
    case ErrorCode.Cancelled:
      return "CANCELLED";
    case ErrorCode.DataLoss:
      return "DATA_LOSS";
    case ErrorCode.Internal:
      return "INTERNAL";
    case ErrorCode.Unauthenticated:
      return "UNAUTHENTICATED";
    case ErrorCode.PermissionDenied:
      return "PERMISSION_DENIED";
    case ErrorCode.Unimplemented:
      return "UNIMPLEMENTED";
    case ErrorCode.ResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    default: {
      const exhaustive: never = code;
      throw new Error(`unmapped error code ${String(exhaustive)}`);
    }
  }
}

/** The inverse direction, for clients: which code a gRPC status most likely carries. */
export function errorCodeOfStatus(status: number): ErrorCode {
  switch (status) {
    case GRPC_STATUS.INVALID_ARGUMENT:
      return ErrorCode.InvalidArgument;
    case GRPC_STATUS.NOT_FOUND:
      return ErrorCode.NotFound;
    case GRPC_STATUS.ALREADY_EXISTS:
      return ErrorCode.AlreadyExists;
    case GRPC_STATUS.FAILED_PRECONDITION:
      return ErrorCode.FailedPrecondition;
    case GRPC_STATUS.ABORTED:
      return ErrorCode.Conflict;
    case GRPC_STATUS.UNAVAILABLE:
      return ErrorCode.Unavailable;
    case GRPC_STATUS.DEADLINE_EXCEEDED:
      return ErrorCode.DeadlineExceeded;
    case GRPC_STATUS.CANCELLED:
      return ErrorCode.Cancelled;
    case GRPC_STATUS.DATA_LOSS:
      return ErrorCode.DataLoss;
    case GRPC_STATUS.UNAUTHENTICATED:
      return ErrorCode.Unauthenticated;
    case GRPC_STATUS.PERMISSION_DENIED:
      return ErrorCode.PermissionDenied;
    case GRPC_STATUS.UNIMPLEMENTED:
      return ErrorCode.Unimplemented;
    case GRPC_STATUS.RESOURCE_EXHAUSTED:
      return ErrorCode.ResourceExhausted;
    default:
      return ErrorCode.Internal;
  }
}
