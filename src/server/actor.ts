// Who a journaled decision or lifecycle record names as its actor (docs/protocol.md §12.4, §19).
// Invariants: on a host with credentials the actor is the authenticated principal — `principal` its
// name, `issuer` "harnesshost:token" or "harnesshost:jwt" (how the host verified it) — and what the
// client asserted survives only as `subject`, "on behalf of", under it; a client can never make the
// journal name another principal. A host without credentials verifies no one, and records the
// client's assertion as it was (the reference's behaviour).
import { create } from "@bufbuild/protobuf";
import { type IdentityRef, IdentityRefSchema } from "../gen/agentsessions/v1/common_pb.js";
import type { Principal } from "./principals.js";

/** The `issuer` prefix of an actor the host verified. */
export const VERIFIED_ISSUER_PREFIX = "harnesshost:";

/** The name an asserted identity gives ("" when none, or when it only repeats the principal's own). */
function assertedName(asserted: IdentityRef | undefined, principal: Principal): string {
  if (asserted === undefined) return "";
  const name = asserted.principal || asserted.subject;
  return name === principal.name ? "" : name;
}

/** The actor to journal for a call by `principal` asserting `asserted`. */
export function actorOf(principal: Principal | undefined, asserted: IdentityRef | undefined): IdentityRef | undefined {
  return principal === undefined ? asserted : verifiedActor(principal, asserted);
}

/**
 * The actor of each token-file principal's calls that assert no one else: made once per principal (a
 * reload of the file makes new principals, so new actors) and frozen, as every record of those calls
 * shares it. A JWT's principal is made per verification, so its actor is made per call as well.
 */
const ownActors = new WeakMap<Principal, IdentityRef>();

/** The verified actor of a call by `principal` (asserting `asserted`, kept as "on behalf of"). */
export function verifiedActor(principal: Principal, asserted?: IdentityRef): IdentityRef {
  const subject = assertedName(asserted, principal);
  if (subject !== "" || principal.via !== "token") return actorMessage(principal, subject);
  let own = ownActors.get(principal);
  if (own === undefined) {
    own = Object.freeze(actorMessage(principal, "")) as IdentityRef;
    ownActors.set(principal, own);
  }
  return own;
}

function actorMessage(principal: Principal, subject: string): IdentityRef {
  return create(IdentityRefSchema, {
    principal: principal.name,
    issuer: `${VERIFIED_ISSUER_PREFIX}${principal.via}`,
    subject,
  });
}
