// Typed errors with stable codes, and the one table that maps them to gRPC statuses (docs/protocol.md §10).
// Invariant: every error that reaches a caller carries a code from ErrorCode; nothing else decides
// which gRPC status a failure gets.
import { status as GrpcStatus } from "@grpc/grpc-js";

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

export function isHostError(err: unknown, code?: ErrorCode): err is HostError {
  return err instanceof HostError && (code === undefined || err.code === code);
}

/** The single mapping from error codes to gRPC statuses. */
export function grpcStatusOf(code: ErrorCode): GrpcStatus {
  switch (code) {
    case ErrorCode.InvalidArgument:
      return GrpcStatus.INVALID_ARGUMENT;
    case ErrorCode.NotFound:
      return GrpcStatus.NOT_FOUND;
    case ErrorCode.AlreadyExists:
      return GrpcStatus.ALREADY_EXISTS;
    case ErrorCode.Unplaceable:
    case ErrorCode.FailedPrecondition:
    case ErrorCode.Diverged:
      return GrpcStatus.FAILED_PRECONDITION;
    case ErrorCode.Conflict:
    case ErrorCode.Fenced:
    case ErrorCode.SessionBusy:
      return GrpcStatus.ABORTED;
    case ErrorCode.Unavailable:
      return GrpcStatus.UNAVAILABLE;
    case ErrorCode.DeadlineExceeded:
      return GrpcStatus.DEADLINE_EXCEEDED;
    case ErrorCode.Cancelled:
      return GrpcStatus.CANCELLED;
    case ErrorCode.DataLoss:
      return GrpcStatus.DATA_LOSS;
    case ErrorCode.Internal:
      return GrpcStatus.INTERNAL;
    case ErrorCode.Unauthenticated:
      return GrpcStatus.UNAUTHENTICATED;
    case ErrorCode.PermissionDenied:
      return GrpcStatus.PERMISSION_DENIED;
    case ErrorCode.Unimplemented:
      return GrpcStatus.UNIMPLEMENTED;
    case ErrorCode.ResourceExhausted:
      return GrpcStatus.RESOURCE_EXHAUSTED;
    default: {
      const exhaustive: never = code;
      throw new Error(`unmapped error code ${String(exhaustive)}`);
    }
  }
}

/** The inverse direction, for clients: which code a gRPC status most likely carries. */
export function errorCodeOfStatus(status: number): ErrorCode {
  switch (status) {
    case GrpcStatus.INVALID_ARGUMENT:
      return ErrorCode.InvalidArgument;
    case GrpcStatus.NOT_FOUND:
      return ErrorCode.NotFound;
    case GrpcStatus.ALREADY_EXISTS:
      return ErrorCode.AlreadyExists;
    case GrpcStatus.FAILED_PRECONDITION:
      return ErrorCode.FailedPrecondition;
    case GrpcStatus.ABORTED:
      return ErrorCode.Conflict;
    case GrpcStatus.UNAVAILABLE:
      return ErrorCode.Unavailable;
    case GrpcStatus.DEADLINE_EXCEEDED:
      return ErrorCode.DeadlineExceeded;
    case GrpcStatus.CANCELLED:
      return ErrorCode.Cancelled;
    case GrpcStatus.DATA_LOSS:
      return ErrorCode.DataLoss;
    case GrpcStatus.UNAUTHENTICATED:
      return ErrorCode.Unauthenticated;
    case GrpcStatus.PERMISSION_DENIED:
      return ErrorCode.PermissionDenied;
    case GrpcStatus.UNIMPLEMENTED:
      return ErrorCode.Unimplemented;
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return ErrorCode.ResourceExhausted;
    default:
      return ErrorCode.Internal;
  }
}
