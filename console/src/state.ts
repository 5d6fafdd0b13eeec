// What the console calls a session's state, derived only from what the host serves: the turn status
// (the harnesshost.dev/turn annotation, read by the client's own parser — the same one the typed
// client and the CLI use) and the compute tier, whose words are the host's (wire/compute-states.ts:
// none, live, warm, cold, terminated). Invariants: State always says what the turn is doing (never the
// tier's word, which has its own column); a session that needs a person or a resume says so.
import type { Session } from "../../src/gen/agentsessions/v1/session_pb.js";
import { type Turn, turnOf } from "../../src/client/turn.js";
import { COMPUTE_STATE_WORDS, type ComputeStateWord, computeStateWord } from "../../src/wire/compute-states.js";

export { turnOf };
export type { Turn };

/** The compute tier in the one vocabulary the CLI's --state and Console.ListSessions accept. */
export function tierOf(session: Session): ComputeStateWord {
  return computeStateWord(session.computeState);
}

/**
 * What the State column shows — the turn's status in an operator's words: `waiting` (for a person),
 * `needs resume` (decided or interrupted), `running`, `failed`, `new`, `completed`; `unknown` when the
 * host sent no status.
 */
export function stateOf(session: Session): string {
  const turn = turnOf(session);
  if (turn === undefined) return "unknown";
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
    case "completed":
      return "completed";
    default: {
      const exhaustive: never = turn.status;
      return String(exhaustive);
    }
  }
}

/**
 * Why a new turn cannot start now, or undefined when it can: the host refuses new input while the
 * session's own gate is open or decided without its receipt (docs/protocol.md §5.8), and while a turn
 * runs.
 */
export function runBlockedBy(turn: Turn | undefined): string | undefined {
  if (turn === undefined || turn.inherited === true) return undefined;
  switch (turn.status) {
    case "awaiting":
      return turn.wait === "question"
        ? "the turn is parked on a question: answer it, then resume"
        : "the turn is parked on an approval: approve or deny it, then resume";
    case "decided":
      return "the turn's gate is decided: resume it to finish the turn";
    case "running":
      return "a turn is running";
    case "new":
    case "completed":
    case "interrupted":
    case "invalid":
      return undefined;
    default: {
      const exhaustive: never = turn.status;
      return String(exhaustive);
    }
  }
}

/** The tiers the Sessions view filters by on the host (harnesshost.v1.Console.ListSessions). */
export const TIERS: readonly ComputeStateWord[] = COMPUTE_STATE_WORDS;
