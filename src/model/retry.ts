// Bounded retries with exponential backoff and full jitter (docs/protocol.md §14.3). Invariant: only failures that
// classify as "expected" are retried; a defect or an interrupt surfaces from the attempt that raised
// it, and a fired signal ends the loop (including a backoff sleep) at once.
import { ErrorCode, HostError } from "../errors/index.js";
import {
  classifyFailure,
  DEFAULT_RETRY_POLICY,
  ModelInterruptedError,
  ModelUnavailableError,
  type RetryPolicy,
  type Sleep,
} from "./types.js";

export interface RetryInfo {
  /** The attempt that just failed (1-based). */
  readonly attempt: number;
  /** How long the loop will wait before the next attempt. */
  readonly delayMs: number;
  readonly error: unknown;
}

interface ResolvedPolicy {
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly multiplier: number;
  readonly sleep: Sleep;
  readonly random: () => number;
}

function interruptOf(signal: AbortSignal, cause?: unknown): ModelInterruptedError {
  return new ModelInterruptedError("model call cancelled", { cause: cause ?? signal.reason });
}

/** A timer-based sleep that rejects with ModelInterruptedError the moment `signal` fires. */
export const abortableSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(interruptOf(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(interruptOf(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

function resolvePolicy(policy: RetryPolicy): ResolvedPolicy {
  const resolved: ResolvedPolicy = {
    maxAttempts: policy.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts,
    initialBackoffMs: policy.initialBackoffMs ?? DEFAULT_RETRY_POLICY.initialBackoffMs,
    maxBackoffMs: policy.maxBackoffMs ?? DEFAULT_RETRY_POLICY.maxBackoffMs,
    multiplier: policy.multiplier ?? DEFAULT_RETRY_POLICY.multiplier,
    sleep: policy.sleep ?? abortableSleep,
    random: policy.random ?? Math.random,
  };
  const valid =
    Number.isInteger(resolved.maxAttempts) &&
    resolved.maxAttempts >= 1 &&
    resolved.initialBackoffMs >= 0 &&
    resolved.maxBackoffMs >= 0 &&
    resolved.multiplier >= 1;
  if (!valid) {
    throw new HostError(
      ErrorCode.InvalidArgument,
      "retry policy: maxAttempts must be an integer >= 1, backoffs >= 0, multiplier >= 1",
    );
  }
  return resolved;
}

/** The wait after failed attempt `attempt`: Retry-After when the server sent one, else full jitter. */
export function backoffDelayMs(policy: RetryPolicy, attempt: number, error: unknown): number {
  const p = resolvePolicy(policy);
  if (error instanceof ModelUnavailableError && error.retryAfterMs !== undefined) {
    return Math.min(Math.max(0, error.retryAfterMs), p.maxBackoffMs);
  }
  const bound = Math.min(p.maxBackoffMs, p.initialBackoffMs * p.multiplier ** (attempt - 1));
  return Math.floor(p.random() * bound);
}

/**
 * Runs `fn(attempt)` until it succeeds, fails with a non-expected failure, or `maxAttempts` is used
 * up (the last error is rethrown). If `signal` fires, the result is a ModelInterruptedError.
 */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  policy: RetryPolicy = {},
  signal?: AbortSignal,
  onRetry?: (info: RetryInfo) => void,
): Promise<T> {
  const p = resolvePolicy(policy);
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) throw interruptOf(signal);
    try {
      return await fn(attempt);
    } catch (err) {
      if (signal?.aborted) {
        throw classifyFailure(err) === "interrupt" ? err : interruptOf(signal, err);
      }
      if (classifyFailure(err) !== "expected" || attempt >= p.maxAttempts) throw err;
      const delayMs = backoffDelayMs(policy, attempt, err);
      onRetry?.({ attempt, delayMs, error: err });
      await p.sleep(delayMs, signal);
    }
  }
}
