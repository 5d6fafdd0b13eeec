// Approval gates as the session-log projection folds them (docs/protocol.md §5.8). Invariant: a gate is
// the pair TOOL_CALL{REQUIRES_APPROVAL} + APPROVAL_REQUEST naming it in the same execution; it is
// decided by the first APPROVAL_RESULT naming its exact (execution, call, request seq) and receipted by
// the first TOOL_RESULT for its call after that decision. Owner is relative to the session's own fork
// point: a request committed before it belongs to an ancestor. Only structured fields are read.
import { Mediation, type ToolCall } from "../gen/agentsessions/v1/common_pb.js";
import type { JournalRecord, SeqEvent } from "../journal/types.js";

/** The tuple that names one gate (wire ApprovalRef). */
export interface ApprovalRef {
  readonly executionId: string;
  readonly toolCallId: string;
  readonly requestSeq: number;
}

export type Owner = "own" | "inherited";
export type GateState = "open" | "decided" | "receipted";

/** A recorded gate, with whatever the log says happened to it. */
export interface Gate<R extends SeqEvent = JournalRecord> {
  readonly ref: ApprovalRef;
  readonly call: ToolCall;
  readonly callSeq: number;
  readonly decision?: { readonly record: R; readonly approved: boolean; readonly reason: string };
  readonly receiptSeq?: number;
  readonly state: GateState;
  readonly owner: Owner;
}

export interface GateEntry<R> {
  ref: ApprovalRef;
  call: ToolCall;
  callSeq: number;
  decision?: { readonly record: R; readonly approved: boolean; readonly reason: string };
  receiptSeq?: number;
}

const key = (exec: string, id: string): string => `${exec}\u0000${id}`;

/** What a GateBook holds, as plain data: its pending gated calls and its gates, by key (codec.ts). */
export interface GateBookState<R> {
  readonly calls: readonly (readonly [string, { readonly call: ToolCall; readonly seq: number }])[];
  readonly gates: readonly (readonly [string, GateEntry<R>])[];
}

export class GateBook<R extends SeqEvent> {
  /** Gated calls whose request is not recorded yet. */
  private readonly calls = new Map<string, { call: ToolCall; seq: number }>();
  private readonly gates = new Map<string, GateEntry<R>>();

  /** Folds one effect record of an execution; true when it opened a gate (an APPROVAL_REQUEST). */
  apply(rec: R): boolean {
    const e = rec.event;
    switch (e.body.case) {
      case "tool":
        if (e.body.value.mediation === Mediation.REQUIRES_APPROVAL)
          this.calls.set(key(e.executionId, e.body.value.id), { call: e.body.value, seq: rec.seq });
        return false;
      case "approval": {
        const k = key(e.executionId, e.body.value.toolCallId);
        const call = this.calls.get(k);
        if (!call) return false;
        this.calls.delete(k);
        this.gates.set(k, {
          ref: { executionId: e.executionId, toolCallId: call.call.id, requestSeq: rec.seq },
          call: call.call,
          callSeq: call.seq,
        });
        return true;
      }
      case "approvalResult": {
        const gate = this.gates.get(key(e.executionId, e.body.value.toolCallId));
        if (!gate || gate.decision || Number(e.body.value.requestSeq) !== gate.ref.requestSeq) return false;
        gate.decision = { record: rec, approved: e.body.value.approved, reason: e.body.value.reason };
        return false;
      }
      case "result": {
        const gate = this.gates.get(key(e.executionId, e.body.value.id));
        if (gate?.decision && gate.receiptSeq === undefined) gate.receiptSeq = rec.seq;
        return false;
      }
      default:
        return false;
    }
  }

  exportState(): GateBookState<R> {
    return { calls: [...this.calls], gates: [...this.gates] };
  }

  static fromState<R extends SeqEvent>(s: GateBookState<R>): GateBook<R> {
    const book = new GateBook<R>();
    for (const [k, c] of s.calls) book.calls.set(k, { call: c.call, seq: c.seq });
    for (const [k, g] of s.gates) book.gates.set(k, { ...g });
    return book;
  }

  /** The gate of a call, as seen from a session whose own records start at `ownFrom`. */
  get(executionId: string, toolCallId: string, ownFrom: number): Gate<R> | undefined {
    const g = this.gates.get(key(executionId, toolCallId));
    if (!g) return undefined;
    return {
      ref: g.ref,
      call: g.call,
      callSeq: g.callSeq,
      ...(g.decision ? { decision: g.decision } : {}),
      ...(g.receiptSeq !== undefined ? { receiptSeq: g.receiptSeq } : {}),
      state: g.receiptSeq !== undefined ? "receipted" : g.decision ? "decided" : "open",
      owner: g.ref.requestSeq < ownFrom ? "inherited" : "own",
    };
  }
}
