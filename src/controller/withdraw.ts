// Withdrawing a parked turn's wait (docs/protocol.md §17.3). Invariant: a withdrawal is written with the
// facts the log already knows — the gate decided as denied (APPROVAL_RESULT, the Cancel's reason), its
// denied receipt (TOOL_RESULT APPROVAL_DENIED, the executor never invoked) and ERROR{CANCELLED} cutting
// the turn — so the session-log projection reads it with no new rule: the gate is receipted (nothing is
// parked, new input is accepted), the turn is interrupted and cancelled, and Resume re-drives it, the
// harness then seeing its call denied. Only the session's own open gate can be withdrawn.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { EventKind, EventSchema, type Event, type IdentityRef } from "../gen/agentsessions/v1/common_pb.js";
import { deniedReceipt } from "./approvals.js";
import { ev } from "./events.js";
import type { ApprovalRef, SessionLog } from "../projection/session-log.js";

export interface WithdrawalPlan {
  /** The head the events chain on (CAS). */
  readonly head: number;
  readonly ref: ApprovalRef;
  readonly events: readonly Event[];
}

/** The text every withdrawal records, with the Cancel's reason when one was given. */
export function withdrawnText(reason: string): string {
  return reason === "" ? "wait withdrawn by Cancel" : `wait withdrawn by Cancel: ${reason}`;
}

/** The events that withdraw the session's own open gate; undefined when it has none. */
export function planWithdrawal(log: SessionLog, reason: string, identity?: IdentityRef): WithdrawalPlan | undefined {
  const gate = log.pendingApproval();
  if (!gate) return undefined;
  const { executionId, toolCallId, requestSeq } = gate.ref;
  const head = log.head.seq;
  const text = withdrawnText(reason);
  const decision = create(EventSchema, {
    kind: EventKind.EVENT_APPROVAL_RESULT,
    executionId,
    ts: timestampNow(),
    ...(identity ? { actor: identity } : {}),
    body: {
      case: "approvalResult",
      value: { toolCallId, approved: false, reason: text, requestSeq: BigInt(requestSeq) },
    },
  });
  const cancelled = ev.error(executionId, GrpcStatus.CANCELLED, text);
  if (identity) cancelled.actor = identity;
  return {
    head,
    ref: gate.ref,
    events: [decision, ev.toolResult(executionId, deniedReceipt(toolCallId, requestSeq, head + 1)), cancelled],
  };
}
