// What the console calls a session's state, derived only from what the host serves: the turn status
// annotation (harnesshost.dev/turn, the same one the CLI prints) and the compute tier, whose words are
// the host's (wire/compute-states.ts: none, live, warm, cold, terminated). Invariant: a session that
// needs a person or a resume says so before anything about its tier.
import type { Session } from "../../src/gen/agentsessions/v1/session_pb.js";
import { COMPUTE_STATE_WORDS, type ComputeStateWord, computeStateWord } from "../../src/wire/compute-states.js";

export const TURN_ANNOTATION = "harnesshost.dev/turn";

export interface TurnInfo {
  readonly status: string;
  readonly wait?: string;
  readonly approved?: boolean;
  readonly error?: string;
  readonly next?: string;
}

export function turnOf(session: Session): TurnInfo {
  const raw = session.annotations[TURN_ANNOTATION];
  if (raw === undefined) return { status: "unknown" };
  try {
    const parsed = JSON.parse(raw) as Partial<TurnInfo>;
    return { ...parsed, status: typeof parsed.status === "string" ? parsed.status : "unknown" };
  } catch {
    return { status: "unknown" };
  }
}

/** The compute tier in the one vocabulary the CLI's --state and Console.ListSessions accept. */
export function tierOf(session: Session): ComputeStateWord {
  return computeStateWord(session.computeState);
}

/**
 * What the State column shows: the turn's status when it needs attention or is moving (waiting for a
 * person, needs resume, running, failed, new), otherwise the compute tier's word.
 */
export function stateOf(session: Session): string {
  const turn = turnOf(session);
  switch (turn.status) {
    case "awaiting":
      return "waiting";
    case "decided":
    case "interrupted":
      return "needs resume";
    case "running":
      return "running";
    case "invalid":
      return "failed";
    case "new":
      return "new";
    default:
      break;
  }
  return tierOf(session);
}

/** The tiers the Sessions view filters by on the host (harnesshost.v1.Console.ListSessions). */
export const TIERS: readonly ComputeStateWord[] = COMPUTE_STATE_WORDS;
