// A session's turn status: what its last turn left to do and which command continues it (docs/cli.md,
// "Session status"). Invariant: it is read from the session-log projection (SessionLog) and this host's
// session guard only — never from records directly — and exec_state, the `harnesshost.dev/turn`
// annotation and the CLI's status line are all rendered from it, so they cannot disagree.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { ExecState } from "../gen/agentsessions/v1/session_pb.js";
import type { ApprovalRef, Owner, SessionLog } from "../projection/session-log.js";
import { ASK_TOOL, questionOf, type Question } from "../controller/questions.js";
import { isHostError } from "../errors/index.js";
import type { NextCommand, TurnAnnotation, WaitKind } from "../wire/annotations.js";

export type TurnStatus =
  /** No turn ever ran: `exec` starts one. */
  | { readonly kind: "new" }
  /** The last turn completed. */
  | { readonly kind: "completed" }
  /** This host is running an operation (exec, resume, suspend, fork, approve) on the session now. */
  | { readonly kind: "running" }
  /** The turn is parked on an undecided gate: `approve`/`answer` it, then `resume`. */
  | {
      readonly kind: "awaiting";
      readonly wait: WaitKind;
      readonly ref: ApprovalRef;
      readonly owner: Owner;
      /** The recorded question, when the gate is one (wait "question"). */
      readonly question?: Question;
    }
  /** The gate is decided but the turn has not continued yet: `resume` runs it. */
  | {
      readonly kind: "decided";
      readonly wait: WaitKind;
      readonly ref: ApprovalRef;
      readonly approved: boolean;
      readonly owner: Owner;
      readonly question?: Question;
    }
  /** The turn was cut (a failure, a cancellation, a crash) before its END: `resume` re-drives it. */
  | {
      readonly kind: "interrupted";
      readonly executionId: string;
      readonly canceled: boolean;
      readonly error: string;
      readonly owner: Owner;
    }
  /** The log breaks the execution grammar; nothing continues it. */
  | { readonly kind: "invalid"; readonly error: string };

export function turnStatus(log: SessionLog, busy: boolean): TurnStatus {
  if (busy) return { kind: "running" };
  let pending: ReturnType<SessionLog["pending"]>;
  try {
    pending = log.pending();
  } catch (err) {
    return { kind: "invalid", error: isHostError(err) ? err.message : String(err) };
  }
  if (!pending) return log.hasTurns ? { kind: "completed" } : { kind: "new" };
  const t = pending.trailing;
  if (t.kind === "gate") {
    const asked = t.gate.call.tool === ASK_TOOL ? { question: questionOf(t.gate.call) } : {};
    const wait: WaitKind = asked.question ? "question" : "approval";
    if (t.gate.state === "open") return { kind: "awaiting", wait, ref: t.gate.ref, owner: t.gate.owner, ...asked };
    if (t.gate.decision)
      return {
        kind: "decided",
        wait,
        ref: t.gate.ref,
        approved: t.gate.decision.approved,
        owner: t.gate.owner,
        ...asked,
      };
  }
  const error = pending.execution.error;
  return {
    kind: "interrupted",
    executionId: pending.execution.executionId,
    canceled: error?.code === GrpcStatus.CANCELLED,
    error: error?.description ?? "no END and no ERROR recorded (the host stopped mid-turn)",
    owner: pending.owner,
  };
}

export function execStateOf(status: TurnStatus): ExecState {
  switch (status.kind) {
    case "new":
      return ExecState.EXEC_PENDING;
    case "completed":
      return ExecState.EXEC_COMPLETED;
    case "running":
      return ExecState.EXEC_RUNNING;
    case "awaiting":
    case "decided":
      return ExecState.EXEC_AWAITING;
    case "interrupted":
      return status.canceled ? ExecState.EXEC_CANCELED : ExecState.EXEC_FAILED;
    case "invalid":
      return ExecState.EXEC_FAILED;
    default: {
      const exhaustive: never = status;
      throw new Error(`unknown turn status ${String(exhaustive)}`);
    }
  }
}

/** The command that continues the session, if one does. */
export function nextCommand(status: TurnStatus): NextCommand | undefined {
  switch (status.kind) {
    case "new":
      return "exec";
    case "awaiting":
      return status.owner === "own" ? (status.wait === "question" ? "answer" : "approve") : undefined;
    case "decided":
    case "interrupted":
      return "resume";
    case "completed":
    case "running":
    case "invalid":
      return undefined;
    default: {
      const exhaustive: never = status;
      throw new Error(`unknown turn status ${String(exhaustive)}`);
    }
  }
}

function gateOf(ref: ApprovalRef): NonNullable<TurnAnnotation["gate"]> {
  return { execution_id: ref.executionId, tool_call_id: ref.toolCallId, request_seq: ref.requestSeq };
}

function askedOf(q: Question | undefined): Pick<TurnAnnotation, "question"> {
  return q ? { question: { text: q.question, choices: [...q.choices], allow_free_text: q.allowFreeText } } : {};
}

export function turnAnnotation(status: TurnStatus): TurnAnnotation {
  const next = nextCommand(status);
  const base = { status: status.kind, ...(next !== undefined ? { next } : {}) };
  switch (status.kind) {
    case "awaiting":
      return {
        ...base,
        wait: status.wait,
        gate: gateOf(status.ref),
        ...askedOf(status.question),
        ...(status.owner === "inherited" ? { inherited: true } : {}),
      };
    case "decided":
      return {
        ...base,
        wait: status.wait,
        gate: gateOf(status.ref),
        ...askedOf(status.question),
        approved: status.approved,
        ...(status.owner === "inherited" ? { inherited: true } : {}),
      };
    case "interrupted":
      return { ...base, error: status.error, ...(status.owner === "inherited" ? { inherited: true } : {}) };
    case "invalid":
      return { ...base, error: status.error };
    case "new":
    case "completed":
    case "running":
      return base;
    default: {
      const exhaustive: never = status;
      throw new Error(`unknown turn status ${String(exhaustive)}`);
    }
  }
}
