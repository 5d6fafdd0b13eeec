// Approval decisions (docs/protocol.md §12.4, §12.5). Invariants: a gate (as the session-log
// projection reads it, gates.ts) moves on only through an APPROVAL_RESULT fact naming its exact
// (execution, call, request seq) tuple; an exact retry of a decision yields the committed record, a
// changed one is refused; only the session's own open gate — the one GetSession shows — is decided;
// a gate inherited through Fork can never be decided in the child.
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import {
  EventKind,
  EventSchema,
  IdentityRefSchema,
  ToolResultSchema,
  ToolResult_Code,
  type Event,
  type IdentityRef,
  type ToolCall,
  type ToolResult,
} from "../gen/agentsessions/v1/common_pb.js";
import { jcs, protoJson } from "../canon/index.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { JournalRecord } from "../journal/types.js";
import type { ApprovalRef } from "../projection/gates.js";
import type { SessionLog } from "../projection/session-log.js";
import { ASK_TOOL, questionOf } from "./questions.js";

export type { ApprovalRef } from "../projection/gates.js";

/**
 * The sticky outcome of a gated call with no decision yet: the turn parks (neither END nor ERROR).
 * Every later sink call of the turn fails with this same error.
 */
export class ApprovalParkedError extends HostError {
  readonly ref: ApprovalRef;
  constructor(ref: ApprovalRef) {
    super(
      ErrorCode.FailedPrecondition,
      `turn ${ref.executionId} parked: tool call ${ref.toolCallId} awaits an approval decision (request seq ${ref.requestSeq})`,
    );
    this.ref = ref;
  }
}

export function isApprovalParked(err: unknown): err is ApprovalParkedError {
  return err instanceof ApprovalParkedError;
}

export function sameRef(a: ApprovalRef, b: ApprovalRef): boolean {
  return a.executionId === b.executionId && a.toolCallId === b.toolCallId && a.requestSeq === b.requestSeq;
}

export const DENIED_TEXT = "Tool execution denied by approval decision.";

/** The SUSPEND detail of a park, for people reading the log; the host never parses it (gates are
 * read from structured fields by the projection). */
export function parkDetail(ref: ApprovalRef): string {
  return `parked:${ref.executionId}:${ref.toolCallId}:${ref.requestSeq}`;
}

export interface ApprovalDecision {
  readonly executionId: string;
  readonly toolCallId: string;
  readonly requestSeq: number;
  readonly approved: boolean;
  readonly reason: string;
  readonly identity?: IdentityRef;
}

function identityText(identity: IdentityRef | undefined): string {
  return identity ? jcs(protoJson(IdentityRefSchema, identity)) : "";
}

/** Validates the tuple shape (INVALID_ARGUMENT) before anything is read. */
export function checkDecisionShape(d: ApprovalDecision): void {
  if (d.executionId === "") throw new HostError(ErrorCode.InvalidArgument, "approve: execution_id is required");
  if (d.toolCallId === "") throw new HostError(ErrorCode.InvalidArgument, "approve: tool_call_id is required");
  if (!Number.isSafeInteger(d.requestSeq) || d.requestSeq <= 0)
    throw new HostError(ErrorCode.InvalidArgument, "approve: request_seq must be > 0");
}

export type DecisionPlan =
  | { readonly kind: "existing"; readonly record: JournalRecord }
  | { readonly kind: "append"; readonly event: Event; readonly head: number };

/**
 * What an Approve does to the log: return the committed decision (exact retry), refuse
 * (FAILED_PRECONDITION: wrong, stale, inherited tuple, changed decision, invalid answer), or append
 * exactly one APPROVAL_RESULT at the head.
 */
export function planDecision(log: SessionLog, d: ApprovalDecision): DecisionPlan {
  checkDecisionShape(d);
  const gate = log.gate(d);
  if (!gate) {
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `approve: no approval request (${d.executionId}, ${d.toolCallId}, seq ${d.requestSeq}) in this session`,
    );
  }
  if (gate.owner === "inherited")
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `approve: request seq ${d.requestSeq} was inherited from the fork parent and cannot be decided here`,
    );
  if (gate.decision) {
    const recorded = gate.decision.record.event;
    const same =
      gate.decision.approved === d.approved &&
      gate.decision.reason === d.reason &&
      identityText(recorded.actor) === identityText(d.identity);
    if (same) return { kind: "existing", record: gate.decision.record };
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `approve: request seq ${d.requestSeq} was already decided (seq ${gate.decision.record.seq}) differently`,
    );
  }
  if (log.pendingApproval()?.ref.requestSeq !== gate.ref.requestSeq)
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `approve: request seq ${d.requestSeq} is not the session's pending approval`,
    );
  if (gate.call.tool === ASK_TOOL && d.approved) checkAnswer(gate.call, d.reason);
  const event = create(EventSchema, {
    kind: EventKind.EVENT_APPROVAL_RESULT,
    executionId: d.executionId,
    ts: timestampNow(),
    ...(d.identity ? { actor: d.identity } : {}),
    body: {
      case: "approvalResult",
      value: { toolCallId: d.toolCallId, approved: d.approved, reason: d.reason, requestSeq: BigInt(d.requestSeq) },
    },
  });
  return { kind: "append", event, head: log.head.seq };
}

/** An answer must be one of the question's choices unless free text is allowed (INVALID_ARGUMENT). */
export function checkAnswer(call: ToolCall, answer: string): void {
  const q = questionOf(call);
  if (answer === "") throw new HostError(ErrorCode.InvalidArgument, "answer: the answer text is empty");
  if (q.choices.length > 0 && !q.allowFreeText && !q.choices.includes(answer)) {
    throw new HostError(
      ErrorCode.InvalidArgument,
      `answer: ${JSON.stringify(answer)} is not one of the question's choices (${q.choices.map((c) => JSON.stringify(c)).join(", ")}) and free text is not allowed`,
    );
  }
}

/** The receipt of a denied gate: the executor is never invoked. */
export function deniedReceipt(callId: string, requestSeq: number, decisionSeq: number): ToolResult {
  return create(ToolResultSchema, {
    id: callId,
    isError: true,
    code: ToolResult_Code.APPROVAL_DENIED,
    error: DENIED_TEXT,
    content: [{ part: { case: "text", value: { text: DENIED_TEXT } } }],
    approvalRequestSeq: BigInt(requestSeq),
    approvalDecisionSeq: BigInt(decisionSeq),
  });
}

/** Whether a receipt is valid for its decision (reference receipt validity rule). */
export function receiptMatchesDecision(receipt: ToolResult, approved: boolean): boolean {
  if (!approved) return receipt.isError && receipt.code === ToolResult_Code.APPROVAL_DENIED;
  return (
    (!receipt.isError && receipt.code === ToolResult_Code.CODE_UNSPECIFIED) ||
    (receipt.isError && receipt.code === ToolResult_Code.EXECUTOR_ERROR)
  );
}

/** The decision behind a gate's receipt: in-process only, never serialized (reference ToolResult.Approval). */
export interface ReceiptDecision {
  readonly toolCallId: string;
  readonly approved: boolean;
  readonly reason: string;
  readonly requestSeq: number;
}

const decisions = new WeakMap<ToolResult, ReceiptDecision>();

export function attachDecision(receipt: ToolResult, decision: ReceiptDecision): ToolResult {
  decisions.set(receipt, decision);
  return receipt;
}

/** The decision a gate receipt answers, when the host produced or served it in this process. */
export function decisionOf(receipt: ToolResult): ReceiptDecision | undefined {
  return decisions.get(receipt);
}
