// Per-call options of `harnesshost/client`. Invariant: a call's own options beat the client's
// defaults field by field, and an absolute deadline beats a relative one.
import type { CallOptions as WireCallOptions } from "../wire/index.js";

/** Per-call options: cancellation and a deadline (else the client's default timeout, if any). */
export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Relative deadline in milliseconds. */
  readonly timeoutMs?: number;
  /** Absolute deadline; beats timeoutMs. */
  readonly deadline?: Date | number;
}

export function wireOptions(defaults: CallOptions, own: CallOptions | undefined): WireCallOptions {
  const { signal, timeoutMs, deadline } = { ...defaults, ...own };
  return {
    ...(signal !== undefined ? { signal } : {}),
    ...(deadline !== undefined ? { deadline } : timeoutMs !== undefined ? { timeoutMs } : {}),
  };
}
