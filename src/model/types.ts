// The model-provider contract and its failure taxonomy (docs/protocol.md §16.3: expected, defect,
// interrupt). Invariant: every failure a provider raises classifies as exactly one of expected
// (transient, retried), defect (a bug or bad request, never retried) or interrupt (cancelled by the
// caller, never retried), and classification depends on the error alone.
import { ErrorCode, HostError } from "../errors/index.js";
import type { ModelRequest, ModelResponse } from "../harness/types.js";

export type { ModelRequest, ModelResponse };

export interface InvokeOptions {
  /** Cancels the call (and any backoff sleep) promptly; the result is an interrupt. */
  readonly signal?: AbortSignal;
  /** Receives streamed text deltas in order. Transport only: the response carries the whole text. */
  readonly onDelta?: (chunk: string) => void;
  /**
   * The caller's bound on attempts, the first included. A provider that retries on its own MUST NOT
   * exceed it; the host passes 1 when it runs the retry loop itself (a request's
   * `harnesshost.model_attempts`, docs/protocol.md §16).
   */
  readonly maxAttempts?: number;
}

/** A model behind the host. Harnesses never call one directly: the host does, through the sink. */
export interface ModelProvider {
  readonly name: string;
  invoke(request: ModelRequest, opts: InvokeOptions): Promise<ModelResponse>;
}

/** Exit kinds of a failed call: expected (Fail), defect (Die), interrupt (Interrupt). */
export type FailureClass = "expected" | "defect" | "interrupt";

/**
 * Expected failure: the provider is temporarily unable to answer (HTTP 408/409/425/429/5xx, a reset
 * or refused connection, a network error, one attempt timing out, a stream cut short). Retried.
 */
export class ModelUnavailableError extends HostError {
  /** The HTTP status, when the failure was an HTTP answer. */
  readonly status: number | undefined;
  /** The server's Retry-After, in milliseconds, when it sent one. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, opts: { status?: number; retryAfterMs?: number; cause?: unknown } = {}) {
    super(ErrorCode.Unavailable, message, { cause: opts.cause });
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/**
 * Defect: the request was refused as invalid (any other 4xx, including auth failures), could not be
 * built, or the answer was malformed. Retrying would fail the same way, so it is never retried.
 */
export class ModelRequestError extends HostError {
  readonly status: number | undefined;
  constructor(message: string, opts: { status?: number; cause?: unknown } = {}) {
    super(ErrorCode.Internal, message, { cause: opts.cause });
    this.status = opts.status;
  }
}

/** Interrupt: the caller's signal fired. Never retried. */
export class ModelInterruptedError extends HostError {
  constructor(message = "model call cancelled", opts: { cause?: unknown } = {}) {
    super(ErrorCode.Cancelled, message, { cause: opts.cause });
  }
}

/** HTTP statuses that mean "try again later" rather than "your request is wrong". */
export function isTransientHttpStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || (status >= 500 && status <= 599);
}

/** Socket and undici error codes of connections that failed or dropped (transient). */
const TRANSIENT_NETWORK_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EAI_AGAIN",
  "ENOTFOUND",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CLOSED",
]);

function errorCode(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null || !("code" in err)) return undefined;
  const code = (err as { code: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

/** True for errors raised by fetch/sockets when the network, not the request, failed. */
export function isNetworkError(err: unknown): boolean {
  const code = errorCode(err);
  if (code !== undefined && TRANSIENT_NETWORK_CODES.has(code)) return true;
  if (err instanceof Error) {
    const causeCode = errorCode(err.cause);
    if (causeCode !== undefined && TRANSIENT_NETWORK_CODES.has(causeCode)) return true;
    // undici rejects with TypeError("fetch failed") for every transport-level failure.
    if (err.name === "TypeError" && err.message === "fetch failed") return true;
  }
  return false;
}

/** Classifies any thrown value. Unknown errors are defects: retrying a bug only hides it. */
export function classifyFailure(err: unknown): FailureClass {
  if (err instanceof ModelInterruptedError) return "interrupt";
  if (err instanceof ModelUnavailableError) return "expected";
  if (err instanceof ModelRequestError) return "defect";
  if (err instanceof HostError) {
    switch (err.code) {
      case ErrorCode.Cancelled:
      case ErrorCode.DeadlineExceeded:
        return "interrupt";
      case ErrorCode.Unavailable:
        return "expected";
      default:
        return "defect";
    }
  }
  if (err instanceof Error && err.name === "AbortError") return "interrupt";
  if (err instanceof Error && err.name === "TimeoutError") return "expected";
  if (isNetworkError(err)) return "expected";
  return "defect";
}

/** Sleeps `ms`, rejecting with a ModelInterruptedError as soon as `signal` fires. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/**
 * How expected failures are retried. Every field is optional; defaults are in DEFAULT_RETRY_POLICY.
 * `sleep`, `random` and `now` exist so tests can run the schedule without waiting.
 */
export interface RetryPolicy {
  /** Total attempts including the first (>= 1). */
  readonly maxAttempts?: number;
  /** Upper bound of the first backoff, milliseconds. */
  readonly initialBackoffMs?: number;
  /** Cap on any single backoff, including one asked for by Retry-After, milliseconds. */
  readonly maxBackoffMs?: number;
  /** Growth factor of the backoff bound per attempt (>= 1). */
  readonly multiplier?: number;
  readonly sleep?: Sleep;
  /** Uniform in [0, 1); drives full jitter. */
  readonly random?: () => number;
  /** Epoch milliseconds; used to turn an HTTP-date Retry-After into a delay. */
  readonly now?: () => number;
}

/**
 * Defaults:
 * - maxAttempts 4 (attempts): one call plus three retries rides out a brief provider blip or a
 *   rate-limit window without holding a turn for long.
 * - initialBackoffMs 200 (ms): short enough that a single dropped connection costs little.
 * - maxBackoffMs 5000 (ms): bounds one wait, including a server's Retry-After, so a turn never
 *   stalls for minutes inside a host-held session lock.
 * - multiplier 2: classic exponential growth, 200 → 400 → 800 ms bounds.
 * - full jitter (delay uniform in [0, bound)): spreads retries of many sessions hitting the same
 *   provider so they do not stampede it in lockstep.
 */
export const DEFAULT_RETRY_POLICY = {
  maxAttempts: 4,
  initialBackoffMs: 200,
  maxBackoffMs: 5000,
  multiplier: 2,
} as const;
