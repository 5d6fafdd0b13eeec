// Correlation ids (x-request-id). Invariant: every call has exactly one id — a well-formed id the
// client sent, or a freshly minted 24-hex one — and that id is the one echoed back and logged.
import type { Metadata } from "@grpc/grpc-js";
import { randomHex } from "../controller/ids.js";
import { NO_CONTEXT, type OpContext } from "../obs/context.js";
import type { CallContext } from "../wire/index.js";
import { verifiedActor } from "./actor.js";
import { callerOf } from "./caller.js";
import { REQUEST_ID_HEADER, VALID_REQUEST_ID } from "../wire/request-id.js";

export { REQUEST_ID_HEADER, VALID_REQUEST_ID };

export function mintRequestId(): string {
  return randomHex(12);
}

/** Adopts a valid incoming id, else mints one; the metadata is updated to carry exactly that id. */
export function ensureRequestId(metadata: Metadata): string {
  const [incoming] = metadata.get(REQUEST_ID_HEADER);
  const id = typeof incoming === "string" && VALID_REQUEST_ID.test(incoming) ? incoming : mintRequestId();
  metadata.set(REQUEST_ID_HEADER, id);
  return id;
}

/**
 * A call's context for placement: its request id (set by the call policy on every call), its
 * authenticated principal as the actor of what the operation writes, and that principal's projects
 * when it is limited to some (the placer's session lookup checks them: docs/protocol.md §19).
 */
export function opContext(ctx: Pick<CallContext, "metadata">): OpContext {
  const [id] = ctx.metadata.get(REQUEST_ID_HEADER);
  const who = callerOf(ctx);
  if (who === undefined) return typeof id === "string" ? { requestId: id } : NO_CONTEXT;
  return {
    ...(typeof id === "string" ? { requestId: id } : {}),
    actor: verifiedActor(who),
    ...(who.projects !== "all" ? { projects: who.projects } : {}),
  };
}
