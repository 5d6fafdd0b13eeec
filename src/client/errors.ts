// The one error type of `harnesshost/client`. Invariant: every failure a client call reports — a
// server status, a transport failure, a deadline, the caller's own abort, a refused local check — is a
// HarnessHostError whose `code` is an ErrorCode of the one table (src/errors, the same value a
// HostError in the host carries), whose `status` is the gRPC status it arrived with, and whose message
// is the server's own. This module loads no server code: src/errors and src/wire only.
import {
  ERROR_TABLE,
  ErrorCode,
  errorCodeOfWire,
  GRPC_STATUS_NAMES,
  type GrpcStatusName,
  grpcStatusNameOfNumber,
  isHostError,
} from "../errors/index.js";
import { REQUEST_ID_HEADER } from "../wire/request-id.js";
import { ERROR_CODE_TRAILER, RpcError } from "../wire/status.js";

export { ERROR_CODES, ErrorCode } from "../errors/index.js";

/** The gRPC status names (the values of HarnessHostError.status), from the one table in src/errors. */
export const STATUS_CODES: readonly GrpcStatusName[] = GRPC_STATUS_NAMES;
export type StatusCode = GrpcStatusName;

export interface HarnessHostErrorOptions {
  readonly cause?: unknown;
  readonly requestId?: string;
  /** The gRPC status it arrived with; default: the status ERROR_TABLE gives `code`. */
  readonly status?: StatusCode;
}

export class HarnessHostError extends Error {
  override readonly name = "HarnessHostError";
  /** The error code, e.g. "not_found", "fenced" or "session_busy": HostError's code in the host. */
  readonly code: ErrorCode;
  /** The gRPC status it arrived with, e.g. "NOT_FOUND" or "ABORTED" (what a Go client sees). */
  readonly status: StatusCode;
  /** The server's request id for this call (x-request-id), when it sent one. */
  readonly requestId: string | undefined;
  constructor(code: ErrorCode, message: string, options?: HarnessHostErrorOptions) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.code = code;
    this.status = options?.status ?? ERROR_TABLE[code].grpc;
    this.requestId = options?.requestId;
  }
}

export function isHarnessHostError(err: unknown, code?: ErrorCode): err is HarnessHostError {
  return err instanceof HarnessHostError && (code === undefined || err.code === code);
}

/** Any failure as a HarnessHostError (an existing one is returned as is). */
export function clientError(err: unknown): HarnessHostError {
  if (err instanceof HarnessHostError) return err;
  if (err instanceof RpcError) {
    const id = err.metadata.get(REQUEST_ID_HEADER)[0];
    // The host's own code when it sent one that agrees with the status; else the code the status reads as.
    return new HarnessHostError(errorCodeOfWire(err.grpcCode, err.metadata.get(ERROR_CODE_TRAILER)[0]), err.details, {
      cause: err,
      status: grpcStatusNameOfNumber(err.grpcCode) ?? "UNKNOWN",
      ...(typeof id === "string" ? { requestId: id } : {}),
    });
  }
  if (isHostError(err)) return new HarnessHostError(err.code, err.message, { cause: err });
  return new HarnessHostError(ErrorCode.Internal, err instanceof Error ? err.message : String(err), {
    cause: err,
    status: "UNKNOWN",
  });
}

/** Runs a call, reporting its failure as a HarnessHostError. */
export async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw clientError(err);
  }
}

/** A stream whose failure is reported as a HarnessHostError; leaving the loop early cancels it. */
export async function* stream<T>(source: AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
  try {
    yield* source;
  } catch (err) {
    throw clientError(err);
  }
}
