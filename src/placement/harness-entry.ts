// What placement knows about a harness it serves: the runtime it is placed on and its policies.
// Invariant: a session's harness name resolves to exactly one entry on this host.
import type { Runtime } from "../runtime/types.js";

/** When a memory actor's state is checkpointed (docs/protocol.md §9.4). */
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
  /**
   * The registration declared REQUIRES_MEMORY_SNAPSHOT. Admission places the harness as memory-tier
   * when either the declaration or the live Describe says so (the stricter reading wins), so an
   * address that answers "stateless" cannot talk its way onto a filesystem-only runtime.
   */
  readonly declaredMemory?: boolean;
}

/** Resolves harness names; throws HostError InvalidArgument for an unknown name. */
export interface HarnessResolver {
  resolve(name: string): HarnessEntry;
  /** Optional: makes a name registered elsewhere (another host, same database) resolvable here. */
  refresh?(name: string): Promise<void>;
  readonly defaultName: string;
}
