// Which principal made a call, as its handler sees it. Invariant: only the call policies (gRPC's
// interceptor, the HTTP listener's) bind a principal, after authenticating it, to the call's own
// request metadata object; nothing a client sends can name one. A call on a host without credentials
// has no principal (every project, every permission: the host trusts whoever reaches its listener).
import type { Metadata } from "@grpc/grpc-js";
import type { Principal } from "./principals.js";

const callers = new WeakMap<Metadata, Principal>();

export function bindCaller(metadata: Metadata, principal: Principal): void {
  callers.set(metadata, principal);
}

/** The call's authenticated principal; undefined when the host checks no credentials. */
export function callerOf(ctx: { readonly metadata: Metadata }): Principal | undefined {
  return callers.get(ctx.metadata);
}
