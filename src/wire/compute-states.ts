// The one vocabulary for a session's compute state outside the protobuf enum: the lowercase words the
// console shows in its Tier column, the CLI's `--state` flag and harnesshost.v1.Console.ListSessions
// accept, and (uppercased) the journal's ComputeStateName and the CLI's `compute=` field. Invariant:
// each word names exactly one agentsessions.v1.ComputeState and every ComputeState has one word; this
// module imports only generated code, so the browser console can use it too.
import { ComputeState } from "../gen/agentsessions/v1/session_pb.js";

export const COMPUTE_STATE_WORDS = ["none", "live", "warm", "cold", "terminated"] as const;

export type ComputeStateWord = (typeof COMPUTE_STATE_WORDS)[number];

const ENUM_OF: Readonly<Record<ComputeStateWord, ComputeState>> = {
  none: ComputeState.COMPUTE_NONE,
  live: ComputeState.COMPUTE_LIVE,
  warm: ComputeState.COMPUTE_WARM,
  cold: ComputeState.COMPUTE_COLD,
  terminated: ComputeState.COMPUTE_TERMINATED,
};

/** The word for a wire compute state ("none" for an unset or unknown value). */
export function computeStateWord(state: ComputeState): ComputeStateWord {
  return COMPUTE_STATE_WORDS.find((w) => ENUM_OF[w] === state) ?? "none";
}

/** The word a user typed (any case), or undefined when it names no compute state. */
export function parseComputeStateWord(text: string): ComputeStateWord | undefined {
  const word = text.trim().toLowerCase();
  return (COMPUTE_STATE_WORDS as readonly string[]).includes(word) ? (word as ComputeStateWord) : undefined;
}
