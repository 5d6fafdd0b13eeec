// What an operation carries for observability from the RPC that started it to the placement,
// controller and runtime code it runs (explicitly, never through async-local storage, so an operation
// with tracing off pays nothing for it). Invariant: optional everywhere — code called without one
// (the in-process CLI, tests, library users) behaves exactly the same, with nothing correlated.
// The actor, when present, is the authenticated principal (src/server/actor.ts), never a client's
// assertion: the records the operation writes carry it. `projects`, when present, is the only projects
// the caller may see: the placer's one session lookup answers NOT_FOUND for a session of another.
import type { IdentityRef } from "../gen/agentsessions/v1/common_pb.js";

export interface OpContext {
  /** The call's x-request-id (src/server/request-id.ts). */
  readonly requestId?: string;
  /** Who the host verified made the call (absent on a host without credentials). */
  readonly actor?: IdentityRef;
  /**
   * The only projects the caller may see and act in (absent: every project). A session of another
   * project answers exactly as a missing one (NOT_FOUND), before anything of it is held or written.
   */
  readonly projects?: ReadonlySet<string>;
}

export const NO_CONTEXT: OpContext = {};
