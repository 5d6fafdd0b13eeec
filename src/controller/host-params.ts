// Model-request params addressed to the host, not the provider (docs/protocol.md §16). Invariant: a
// param whose key starts with "harnesshost." is read by the host and never sent to a provider; it is
// part of the request the harness made, so it is covered by the model-input hash (§5.3) and journaled
// with the MODEL_CALL, which keeps replay and resume deterministic. A malformed value is refused
// (INVALID_ARGUMENT) before anything is journaled.
import { invalidArgument as invalid } from "../errors/index.js";
import type { ModelRequest } from "../harness/types.js";

/** Prefix of every host-addressed param. */
export const HOST_PARAM_PREFIX = "harnesshost.";
/** Attempts of this call (1..16, the first included): expected failures are retried with backoff. */
export const ATTEMPTS_PARAM = "harnesshost.model_attempts";
/** Upper bound of the first retry's backoff, milliseconds (0..60000; default 200, doubling). */
export const BACKOFF_PARAM = "harnesshost.retry_backoff_ms";
/** This call is a compaction: its value is how many Start.history events the summary replaces (≥ 1). */
export const COMPACT_PARAM = "harnesshost.compact";

const MAX_ATTEMPTS = 16;
const MAX_BACKOFF_MS = 60_000;

export interface HostParams {
  /** undefined: the provider's own policy, unchanged. */
  readonly attempts?: number;
  readonly backoffMs?: number;
  /** undefined: an ordinary model call. */
  readonly compact?: number;
}

function intParam(key: string, raw: string, min: number, max: number): number {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(raw))
    throw invalid(`param ${key} must be a decimal integer, got ${JSON.stringify(raw.slice(0, 32))}`);
  const n = Number(raw);
  if (n < min || n > max) throw invalid(`param ${key} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** The host params of a request (INVALID_ARGUMENT for an unknown harnesshost.* key or a bad value). */
export function hostParamsOf(request: ModelRequest): HostParams {
  const params = request.params ?? {};
  let attempts: number | undefined;
  let backoffMs: number | undefined;
  let compact: number | undefined;
  for (const [key, raw] of Object.entries(params)) {
    if (!key.startsWith(HOST_PARAM_PREFIX)) continue;
    if (key === ATTEMPTS_PARAM) attempts = intParam(key, raw, 1, MAX_ATTEMPTS);
    else if (key === BACKOFF_PARAM) backoffMs = intParam(key, raw, 0, MAX_BACKOFF_MS);
    else if (key === COMPACT_PARAM) compact = intParam(key, raw, 1, Number.MAX_SAFE_INTEGER);
    else
      throw invalid(
        `unknown host param ${JSON.stringify(key.slice(0, 64))} (known: ${ATTEMPTS_PARAM}, ${BACKOFF_PARAM}, ${COMPACT_PARAM})`,
      );
  }
  return {
    ...(attempts !== undefined ? { attempts } : {}),
    ...(backoffMs !== undefined ? { backoffMs } : {}),
    ...(compact !== undefined ? { compact } : {}),
  };
}

/** The request as a provider sees it: without the host's params. */
export function providerRequest(request: ModelRequest): ModelRequest {
  const params = request.params;
  if (params === undefined || !Object.keys(params).some((k) => k.startsWith(HOST_PARAM_PREFIX))) return request;
  const kept: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) if (!k.startsWith(HOST_PARAM_PREFIX)) kept[k] = v;
  return { ...request, params: kept };
}
