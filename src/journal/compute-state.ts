// The compute-state projection each append applies in its own transaction, so the session row never
// drifts from the journal: approvals leave it alone, SUSPEND/FORK make it COLD, RESUME and ordinary
// turn events make it LIVE.
import { EventKind, Lifecycle_Kind, type Event } from "../gen/agentsessions/v1/common_pb.js";
import type { ComputeStateName } from "./types.js";

export const STATE_NAMES: readonly ComputeStateName[] = ["NONE", "LIVE", "WARM", "COLD", "TERMINATED"];

/** The state after `event` is committed on a session currently in `current`. */
export function projectComputeState(current: ComputeStateName, event: Event): ComputeStateName {
  switch (event.kind) {
    case EventKind.EVENT_APPROVAL_REQUEST:
    case EventKind.EVENT_APPROVAL_RESULT:
      return current;
    case EventKind.EVENT_LIFECYCLE:
      return event.body.case === "lifecycle" ? projectLifecycle(current, event.body.value.kind) : current;
    default:
      return "LIVE";
  }
}

function projectLifecycle(current: ComputeStateName, kind: Lifecycle_Kind): ComputeStateName {
  switch (kind) {
    case Lifecycle_Kind.LIFECYCLE_SUSPEND:
    case Lifecycle_Kind.LIFECYCLE_FORK:
      return "COLD";
    case Lifecycle_Kind.LIFECYCLE_RESUME:
      return "LIVE";
    case Lifecycle_Kind.LIFECYCLE_UNSPECIFIED:
    case Lifecycle_Kind.LIFECYCLE_BASELINE:
    case Lifecycle_Kind.LIFECYCLE_CANCEL:
      return current;
    default:
      return current;
  }
}

/** Reads a stored state string; anything unknown or empty reads back as NONE. */
export function parseComputeState(stored: string): ComputeStateName {
  return (STATE_NAMES as readonly string[]).includes(stored) ? (stored as ComputeStateName) : "NONE";
}
