// Approve and Answer: commit the decision for one exact gate tuple (docs/protocol.md §12.4). Invariants:
// only APPROVAL_RESULT is written, under a fresh fence at the head; an exact retry returns the record
// already committed; nothing is run or resumed.
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { checkDecisionShape, planDecision, type ApprovalDecision } from "../controller/approvals.js";
import type { SessionLog } from "../projection/session-log.js";
import type { JournalRecord } from "../journal/types.js";
import type { OpContext } from "../obs/context.js";
import { recordSpan } from "../obs/trace.js";
import { withLockedSession } from "./locked-session.js";
import { actorDetail } from "./op-actor.js";
import { secondsSince, waitKindOf } from "./op-metrics.js";
import type { ApproveResult } from "./operation-types.js";
import type { PlacementState } from "./placement-state.js";

export async function approveOp(
  state: PlacementState,
  session: string,
  decision: ApprovalDecision,
  ctx?: OpContext,
): Promise<ApproveResult> {
  checkDecisionShape(decision);
  return withLockedSession(state, session, "approve", { ctx }, async (s) => {
    const { log } = s.window;
    const plan = planDecision(log, decision);
    // One info line per decision (an exact retry included), bound to the gated turn.
    const logged = (record: JournalRecord, existing: boolean): ApproveResult => {
      state.opLog(ctx, session, s.info.harness, decision.executionId).info(
        {
          operation: "approve",
          outcome: decision.approved ? "approved" : "denied",
          existing,
          request_seq: decision.requestSeq,
          seq: record.seq,
        },
        "wait decided",
      );
      return { record, existing };
    };
    if (plan.kind === "existing") return logged(plan.record, true);
    const fence = await state.mint(session);
    const request = await s.window.record(decision.requestSeq);
    const record = await state.deps.journal.append(session, plan.head, fence, plan.event);
    observeDecision(state, session, decision, log, request, record);
    state.noteAppended(session, [record]);
    state.effects.audit(s.batch, record, decision.approved ? "approval.approved" : "approval.denied", {
      execution_id: decision.executionId,
      tool_call_id: decision.toolCallId,
      request_seq: decision.requestSeq,
      ...actorDetail(record.event.actor),
    });
    return logged(record, false);
  });
}

/** The wait's span (park to decision) and metrics. */
function observeDecision(
  state: PlacementState,
  session: string,
  decision: ApprovalDecision,
  log: SessionLog,
  request: JournalRecord | undefined,
  record: JournalRecord,
): void {
  const requestTs = request?.event.ts;
  if (requestTs)
    recordSpan("harnesshost.approval.wait", timestampMs(requestTs), {
      "harnesshost.session": session,
      "harnesshost.seq.request": decision.requestSeq,
      "harnesshost.seq.decision": record.seq,
      "harnesshost.approved": decision.approved,
    });
  const metrics = state.deps.metrics;
  if (!metrics) return;
  const gate = log.gate(decision);
  metrics.waitDecided(
    waitKindOf(gate?.call.tool ?? ""),
    decision.approved,
    secondsSince(request),
    state.openedHere.delete(`${session}\u0001${decision.requestSeq}`),
  );
}
