// Approval gates read from the log (SPEC §11, journal-and-canon §2.10). Invariants: a gate is the
// pair TOOL_CALL{REQUIRES_APPROVAL} + host-owned APPROVAL_REQUEST; it moves on only through an
// APPROVAL_RESULT fact naming its exact (execution, call, request seq) tuple; an exact retry of a
// decision yields the committed record, a changed one is refused; a gate inherited through Fork can
// never be decided in the child.
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import {
  EventKind,
  EventSchema,
  IdentityRefSchema,
  Lifecycle_Kind,
  Mediation,
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
import { ASK_TOOL, questionOf } from "./questions.js";

/** The tuple that names one gate (wire ApprovalRef). */
export interface ApprovalRef {
  readonly executionId: string;
  readonly toolCallId: string;
  readonly requestSeq: number;
}

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

/** A recorded gate, with whatever the log says happened to it. */
export interface Gate {
  readonly ref: ApprovalRef;
  readonly call: ToolCall;
  readonly callSeq: number;
  readonly decision?: { readonly record: JournalRecord; readonly approved: boolean; readonly reason: string };
  readonly receiptSeq?: number;
  /** The request precedes this session's FORK marker: it belongs to the parent. */
  readonly inherited: boolean;
}

export interface GateScan {
  readonly gates: readonly Gate[];
  /** The last execution id of the log, and whether it completed. */
  readonly lastExecution?: { readonly id: string; readonly completed: boolean };
  readonly head: number;
}

function forkMarker(records: readonly JournalRecord[]): number {
  let marker = 0;
  for (const rec of records) {
    const b = rec.event.body;
    if (b.case === "lifecycle" && b.value.kind === Lifecycle_Kind.LIFECYCLE_FORK) marker = rec.seq;
  }
  return marker;
}

/** Every gate of the log, in order. */
export function scanGates(records: readonly JournalRecord[]): GateScan {
  const marker = forkMarker(records);
  const calls = new Map<string, { call: ToolCall; seq: number }>();
  const gates: Gate[] = [];
  const byKey = new Map<string, number>();
  let lastExecution: { id: string; completed: boolean } | undefined;
  const key = (exec: string, id: string): string => `${exec}\u0000${id}`;
  for (const rec of records) {
    const e = rec.event;
    if (e.kind === EventKind.EVENT_EXECUTION_START) lastExecution = { id: e.executionId, completed: false };
    if (e.kind === EventKind.EVENT_END && lastExecution?.id === e.executionId) lastExecution.completed = true;
    switch (e.body.case) {
      case "tool":
        if (e.body.value.mediation === Mediation.REQUIRES_APPROVAL)
          calls.set(key(e.executionId, e.body.value.id), { call: e.body.value, seq: rec.seq });
        break;
      case "approval": {
        const call = calls.get(key(e.executionId, e.body.value.toolCallId));
        if (!call) break;
        byKey.set(key(e.executionId, call.call.id), gates.length);
        gates.push({
          ref: { executionId: e.executionId, toolCallId: call.call.id, requestSeq: rec.seq },
          call: call.call,
          callSeq: call.seq,
          inherited: rec.seq < marker,
        });
        break;
      }
      case "approvalResult": {
        const i = byKey.get(key(e.executionId, e.body.value.toolCallId));
        const gate = i === undefined ? undefined : gates[i];
        if (!gate || gate.decision || Number(e.body.value.requestSeq) !== gate.ref.requestSeq) break;
        gates[i!] = {
          ...gate,
          decision: { record: rec, approved: e.body.value.approved, reason: e.body.value.reason },
        };
        break;
      }
      case "result": {
        const i = byKey.get(key(e.executionId, e.body.value.id));
        const gate = i === undefined ? undefined : gates[i];
        if (gate?.decision && gate.receiptSeq === undefined) gates[i!] = { ...gate, receiptSeq: rec.seq };
        break;
      }
      default:
        break;
    }
  }
  return { gates, ...(lastExecution ? { lastExecution } : {}), head: records.at(-1)?.seq ?? 0 };
}

/** The session's own gate awaiting a decision (Session.pending_approval), if any. */
export function openGate(scan: GateScan): Gate | undefined {
  const last = scan.gates.at(-1);
  if (!last || last.inherited || last.decision) return undefined;
  if (scan.lastExecution?.id !== last.ref.executionId || scan.lastExecution.completed) return undefined;
  return last;
}

/** A gate that was decided but whose receipt is not committed yet (Resume completes it). */
export function decidedGate(scan: GateScan): Gate | undefined {
  const last = scan.gates.at(-1);
  if (!last || last.inherited || !last.decision || last.receiptSeq !== undefined) return undefined;
  if (scan.lastExecution?.id !== last.ref.executionId || scan.lastExecution.completed) return undefined;
  return last;
}

/** The SUSPEND detail that marks a park, and its inverse. */
export function parkDetail(ref: ApprovalRef): string {
  return `parked:${ref.executionId}:${ref.toolCallId}:${ref.requestSeq}`;
}

/**
 * The pending gate derived from the session's last record alone (cheap, for GetSession): a park
 * SUSPEND naming it, or an APPROVAL_REQUEST whose park SUSPEND was never committed.
 */
export function pendingFromLastRecord(last: JournalRecord | undefined): ApprovalRef | undefined {
  if (!last) return undefined;
  const e = last.event;
  if (e.body.case === "approval")
    return { executionId: e.executionId, toolCallId: e.body.value.toolCallId, requestSeq: last.seq };
  if (e.body.case !== "lifecycle" || e.body.value.kind !== Lifecycle_Kind.LIFECYCLE_SUSPEND) return undefined;
  const m = /^parked:([0-9a-f]+):(.+):(\d+)$/.exec(e.body.value.detail);
  if (!m) return undefined;
  return { executionId: m[1]!, toolCallId: m[2]!, requestSeq: Number(m[3]) };
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
export function planDecision(records: readonly JournalRecord[], d: ApprovalDecision): DecisionPlan {
  checkDecisionShape(d);
  const scan = scanGates(records);
  const gate = scan.gates.find(
    (g) =>
      g.ref.executionId === d.executionId && g.ref.toolCallId === d.toolCallId && g.ref.requestSeq === d.requestSeq,
  );
  if (!gate) {
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `approve: no approval request (${d.executionId}, ${d.toolCallId}, seq ${d.requestSeq}) in this session`,
    );
  }
  if (gate.inherited)
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
  if (openGate(scan) !== gate)
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
  return { kind: "append", event, head: scan.head };
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
