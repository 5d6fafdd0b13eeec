// The actor of an operation's own records. Invariant: a lifecycle record an operator's call writes
// (suspend, resume, upgrade) names the call's authenticated principal as its actor, and only that —
// the host's own records (a park, a checkpoint) carry none.
import type { Event, IdentityRef } from "../gen/agentsessions/v1/common_pb.js";
import type { OpContext } from "../obs/context.js";

/** `event` with the operation's actor set (unchanged when the call had no verified actor). */
export function byActor(event: Event, ctx: OpContext | undefined): Event {
  if (ctx?.actor !== undefined) event.actor = ctx.actor;
  return event;
}

/** An audit line's actor fields: `actor`, and `on_behalf_of` when the client asserted someone else. */
export function actorDetail(actor: IdentityRef | undefined): Record<string, string> {
  if (actor === undefined || actor.principal === "") return {};
  return {
    actor: actor.principal,
    ...(actor.issuer !== "" ? { actor_issuer: actor.issuer } : {}),
    ...(actor.subject !== "" ? { on_behalf_of: actor.subject } : {}),
  };
}
