// The call metadata of incremental history (docs/protocol.md §8.8), shared by host and node. Invariant:
// a node reads a history token or base only in the exact form this module writes, and a refusal of a
// tail is recognisable by the host without parsing prose (a trailer plus a details prefix).
import type { Metadata } from "@grpc/grpc-js";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { z } from "zod";
import { ErrorCode, HostError, invalidArgument as invalid } from "../errors/index.js";
import { RpcError } from "../wire/index.js";

/** Request: the token the node caches this Start's full history under (32 lowercase hex). */
export const HISTORY_TOKEN_HEADER = "x-harnesshost-history-token";
/** Request, tail Starts only: how many events the node must already hold under the token. */
export const HISTORY_BASE_HEADER = "x-harnesshost-history-base";
/** Response header: the number of events the node now holds under the token (absent: it holds none). */
export const HISTORY_HELD_HEADER = "x-harnesshost-history-held";
/** Trailer of a refused tail (FAILED_PRECONDITION): the host resends the full history. */
export const HISTORY_STALE_TRAILER = "x-harnesshost-history";
export const HISTORY_STALE_VALUE = "stale";
/** Prefix of the refusal's status details. */
export const HISTORY_STALE_PREFIX = "history-stale:";

const TokenSchema = z.string().regex(/^[0-9a-f]{32}$/, "history token must be 32 lowercase hex digits");
const BaseSchema = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,15})$/, "history base must be a decimal count")
  .transform(Number)
  .refine((n) => Number.isSafeInteger(n), "history base out of range");

/** What a Start asks of the node's history cache. */
export type HistoryRequest =
  | { readonly kind: "none" }
  | { readonly kind: "full"; readonly token: string }
  | { readonly kind: "tail"; readonly token: string; readonly base: number };

/** Reads the request's history metadata; INVALID_ARGUMENT when it is present but malformed. */
export function historyRequestOf(metadata: Metadata): HistoryRequest {
  const token = single(metadata, HISTORY_TOKEN_HEADER);
  const base = single(metadata, HISTORY_BASE_HEADER);
  if (token === undefined) {
    if (base !== undefined) throw invalid(`${HISTORY_BASE_HEADER} needs ${HISTORY_TOKEN_HEADER}`);
    return { kind: "none" };
  }
  const t = TokenSchema.safeParse(token);
  if (!t.success) throw invalid(t.error.issues[0]?.message ?? "bad history token");
  if (base === undefined) return { kind: "full", token: t.data };
  const b = BaseSchema.safeParse(base);
  if (!b.success) throw invalid(b.error.issues[0]?.message ?? "bad history base");
  return { kind: "tail", token: t.data, base: b.data };
}

/** The refusal of a tail Start the node cannot extend (sets the trailer on the call). */
export function staleHistory(trailers: Metadata, why: string): HostError {
  trailers.set(HISTORY_STALE_TRAILER, HISTORY_STALE_VALUE);
  return new HostError(ErrorCode.FailedPrecondition, `${HISTORY_STALE_PREFIX} ${why}`);
}

/** Whether a failed Connect is a node's refusal of a tail (so the full history may be resent). */
export function isStaleHistory(err: unknown): boolean {
  if (!(err instanceof RpcError) || err.grpcCode !== GrpcStatus.FAILED_PRECONDITION) return false;
  return (
    err.metadata.get(HISTORY_STALE_TRAILER).includes(HISTORY_STALE_VALUE) ||
    err.details.startsWith(HISTORY_STALE_PREFIX)
  );
}

function single(metadata: Metadata, key: string): string | undefined {
  const values = metadata.get(key);
  if (values.length === 0) return undefined;
  if (values.length > 1) throw invalid(`${key} given ${values.length} times`);
  const v = values[0];
  return typeof v === "string" ? v : undefined;
}
