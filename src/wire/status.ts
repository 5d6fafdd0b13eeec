// Errors across the gRPC boundary. Invariant: a HostError leaves a server with the status chosen by
// grpcStatusOf, its message as details and its ErrorCode in the ERROR_CODE_TRAILER trailer (additive:
// a peer that ignores it sees the same status and message); a non-OK status reaches a caller as an
// RpcError (a HostError) that keeps the original status number, details and trailers and whose code
// is the one the status is read as — the host never takes a finer code from a peer (a harness node is
// not trusted to pick one); the client reads the trailer (src/client/errors.ts, errorCodeOfWire).
import { Metadata, status as GrpcStatus } from "@grpc/grpc-js";
import type { StatusObject } from "@grpc/grpc-js";
import { ErrorCode, HostError, errorCodeOfStatus, grpcStatusOf, redactSecrets } from "../errors/index.js";

/**
 * The trailer (gRPC) and response header (HTTP/Connect) naming a failure's ErrorCode, e.g. `fenced`
 * where the status alone says ABORTED. Sent with every failure a host raises itself; optional to read.
 */
export const ERROR_CODE_TRAILER = "harnesshost-error-code";

/** A failed RPC as seen by a client. */
export class RpcError extends HostError {
  readonly grpcCode: number;
  readonly details: string;
  readonly metadata: Metadata;
  constructor(grpcCode: number, details: string, metadata?: Metadata, options?: { cause?: unknown }) {
    super(errorCodeOfStatus(grpcCode), details, options);
    this.grpcCode = grpcCode;
    this.details = details;
    this.metadata = metadata ?? new Metadata();
  }
}

export function rpcErrorOfStatus(st: Pick<StatusObject, "code" | "details" | "metadata">): RpcError {
  return new RpcError(st.code, st.details, st.metadata);
}

/** The status object grpc-js sends for a handler failure. */
export interface ServerStatus {
  readonly code: GrpcStatus;
  readonly details: string;
  readonly metadata: Metadata;
}

/**
 * Longest status details sent (characters). Details travel in an HTTP/2 trailer: an error message that
 * echoes a huge request field would exceed the peer's header-list limit and wedge the connection.
 */
export const MAX_STATUS_DETAILS = 2048;

/** Details as sent: secrets redacted (src/errors/redact.ts), then cut to MAX_STATUS_DETAILS. */
function boundedDetails(text: string): string {
  const details = redactSecrets(text);
  return details.length <= MAX_STATUS_DETAILS ? details : `${details.slice(0, MAX_STATUS_DETAILS)}… (truncated)`;
}

export function statusOfError(err: unknown, trailers: Metadata): ServerStatus {
  if (err instanceof RpcError) {
    // A peer's status passed on as it came: its finer code, if it named one, is not this host's to vouch for.
    return { code: err.grpcCode, details: boundedDetails(err.details), metadata: trailers };
  }
  if (err instanceof HostError) {
    trailers.set(ERROR_CODE_TRAILER, err.code);
    return { code: grpcStatusOf(err.code), details: boundedDetails(err.message), metadata: trailers };
  }
  const details = err instanceof Error ? err.message : String(err);
  trailers.set(ERROR_CODE_TRAILER, ErrorCode.Internal);
  return { code: GrpcStatus.INTERNAL, details: boundedDetails(details), metadata: trailers };
}

/** The error a client call reports when its own AbortSignal fired. */
export function abortError(signal: AbortSignal): HostError {
  const reason: unknown = signal.reason;
  if (reason instanceof HostError) return reason;
  return new HostError(ErrorCode.Cancelled, "call cancelled by the caller", { cause: reason });
}
