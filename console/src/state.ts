// What the console calls a session's state, derived only from what the host serves: the turn status
// annotation (harnesshost.dev/turn, the same one the CLI prints) and the compute tier. Invariant: a
// session that needs a person or a resume says so before anything about its tier.
import { ComputeState, type Session } from "../../src/gen/agentsessions/v1/session_pb.js";

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

export function tierOf(session: Session): string {
  switch (session.computeState) {
    case ComputeState.COMPUTE_LIVE:
      return "live";
    case ComputeState.COMPUTE_WARM:
      return "warm";
    case ComputeState.COMPUTE_COLD:
      return "cold";
    case ComputeState.COMPUTE_TERMINATED:
      return "terminated";
    default:
      return "none";
  }
}

/** The filterable state: waiting (a person), needs resume, running, live, parked, cold, new, failed. */
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
  const tier = tierOf(session);
  if (tier === "warm") return "parked";
  if (tier === "cold") return "cold";
  return tier === "live" ? "live" : "idle";
}

export const STATES = ["waiting", "needs resume", "running", "live", "parked", "cold", "idle", "new", "failed"];
