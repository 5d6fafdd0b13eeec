// The Connect context key the HTTP listener's policy binds a call's principal under. Invariant: only the
// HTTP transport defines and reads it, so serving gRPC alone never loads @connectrpc/connect.
import { createContextKey } from "@connectrpc/connect";
import type { Principal } from "../server/principals.js";

/** The HTTP listener's principal of a call, set by its policy (policy.ts) as a Connect context value. */
export const CALLER_KEY = createContextKey<Principal | undefined>(undefined, { description: "harnesshost caller" });
