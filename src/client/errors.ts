// The one error type of `harnesshost/client`. Invariant: every failure a client call reports — a
// server status, a transport failure, a deadline, the caller's own abort, a refused local check — is a
// HarnessHostError whose `code` is the gRPC status name and whose message is the server's own.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { grpcStatusOf, isHostError } from "../errors/index.js";
import { REQUEST_ID_HEADER } from "../wire/request-id.js";
import { RpcError } from "../wire/status.js";

/** The gRPC status names, the stable values of HarnessHostError.code. */
export const STATUS_CODES = [
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
] as const;
export type StatusCode = (typeof STATUS_CODES)[number];

function statusName(grpcCode: number): StatusCode {
  const name = GrpcStatus[grpcCode];
  return (STATUS_CODES as readonly string[]).includes(name ?? "") ? (name as StatusCode) : "UNKNOWN";
}

export class HarnessHostError extends Error {
  override readonly name = "HarnessHostError";
  /** The gRPC status name, e.g. "NOT_FOUND" or "FAILED_PRECONDITION". */
  readonly code: StatusCode;
  /** The server's request id for this call (x-request-id), when it sent one. */
  readonly requestId: string | undefined;
  constructor(code: StatusCode, message: string, options?: { cause?: unknown; requestId?: string }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.code = code;
    this.requestId = options?.requestId;
  }
}

export function isHarnessHostError(err: unknown, code?: StatusCode): err is HarnessHostError {
  return err instanceof HarnessHostError && (code === undefined || err.code === code);
}

/** Any failure as a HarnessHostError (an existing one is returned as is). */
export function clientError(err: unknown): HarnessHostError {
  if (err instanceof HarnessHostError) return err;
  if (err instanceof RpcError) {
    const id = err.metadata.get(REQUEST_ID_HEADER)[0];
    return new HarnessHostError(statusName(err.grpcCode), err.details, {
      cause: err,
      ...(typeof id === "string" ? { requestId: id } : {}),
    });
  }
  if (isHostError(err)) return new HarnessHostError(statusName(grpcStatusOf(err.code)), err.message, { cause: err });
  return new HarnessHostError("UNKNOWN", err instanceof Error ? err.message : String(err), { cause: err });
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
