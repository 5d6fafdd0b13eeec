// What placement knows about a harness it serves: the runtime it is placed on and its policies.
// Invariant: a session's harness name resolves to exactly one entry on this host.
import type { Runtime } from "../runtime/types.js";

/** When a memory actor's state is checkpointed (SPEC §8). */
export type CheckpointPolicy = "every-turn" | "on-suspend";

export interface HarnessEntry {
  /** Registry name (what Session.harness holds). */
  readonly name: string;
  readonly source: "static" | "registered";
  readonly runtime: Runtime;
  /** When set, every admission requires Describe to report this id. */
  readonly descriptorId: string;
  readonly checkpointPolicy: CheckpointPolicy;
  readonly state: "active" | "retired";
}

/** Resolves harness names; throws HostError InvalidArgument for an unknown name. */
export interface HarnessResolver {
  resolve(name: string): HarnessEntry;
  readonly defaultName: string;
}
