// What a session operation module is handed by the Placer: the shared state, the actor recovery and
// the per-turn checkpoints. Invariant: one of each per Placer — operations share, never copy, them.
import type { ActorRecovery } from "./actor-recovery.js";
import type { PlacementState } from "./placement-state.js";
import type { TurnCheckpoints } from "./turn-checkpoints.js";

export interface OperationContext {
  readonly state: PlacementState;
  readonly actors: ActorRecovery;
  readonly checkpoints: TurnCheckpoints;
}
