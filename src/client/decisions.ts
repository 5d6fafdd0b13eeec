// How `approve` / `answer` become the exact gate tuple Approve needs (client and in-process CLI alike).
// Invariants: the tuple always comes from the session's pending_approval (never guessed); a choice N
// resolves to the recorded question's N-th choice, and nothing is sent when it does not exist.
import type { Session } from "../gen/agentsessions/v1/session_pb.js";
import type { Question } from "../controller/questions.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { TURN_ANNOTATION, type TurnAnnotation } from "../wire/annotations.js";

export interface PendingTuple {
  readonly executionId: string;
  readonly toolCallId: string;
  readonly requestSeq: number;
}

/** The session's turn annotation (the host's status of its last turn), when it carries one. */
function turnOf(session: Session): TurnAnnotation | undefined {
  const raw = session.annotations[TURN_ANNOTATION];
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as TurnAnnotation;
  } catch {
    return undefined;
  }
}

/** The session's own decided-but-not-resumed gate, from the host's turn annotation. */
function decidedTuple(session: Session): PendingTuple | undefined {
  const t = turnOf(session);
  if (t === undefined || t.status !== "decided" || t.inherited === true || t.gate === undefined) return undefined;
  return { executionId: t.gate.execution_id, toolCallId: t.gate.tool_call_id, requestSeq: t.gate.request_seq };
}

/**
 * The session's pending gate — or, once decided and not yet resumed, that gate (so a repeated decision
 * is an exact retry the host answers with the same record) — else FAILED_PRECONDITION.
 */
export function pendingTuple(session: Session): PendingTuple {
  const p = session.pendingApproval;
  if (!p || p.requestSeq <= 0n) {
    const decided = decidedTuple(session);
    if (decided) return decided;
    throw new HostError(ErrorCode.FailedPrecondition, `session ${session.metadata?.uid ?? ""} has no pending approval`);
  }
  return { executionId: p.executionId, toolCallId: p.toolCallId, requestSeq: Number(p.requestSeq) };
}

/**
 * The recorded question of the session's pending gate, as the host's turn annotation carries it (read
 * from the session-log projection on the host, so no client scans records for it).
 */
export function pendingQuestion(session: Session, tuple: PendingTuple): Question {
  const t = turnOf(session);
  const g = t?.gate;
  if (t === undefined || g === undefined || g.execution_id !== tuple.executionId || g.tool_call_id !== tuple.toolCallId)
    throw new HostError(ErrorCode.FailedPrecondition, `the pending approval (call ${tuple.toolCallId}) is not in view`);
  if (t.wait !== "question" || t.question === undefined)
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `the pending approval (call ${tuple.toolCallId}) is not a question; use approve`,
    );
  return { question: t.question.text, choices: t.question.choices, allowFreeText: t.question.allow_free_text };
}

/** The answer text for a free-text answer or choice N (1-based). */
export function answerText(question: Question, p: { text?: string; choice?: number }): string {
  if (p.choice !== undefined) {
    const choice = question.choices[p.choice - 1];
    if (choice === undefined)
      throw new HostError(
        ErrorCode.InvalidArgument,
        `choice must be 1..${question.choices.length} for this question, got ${p.choice}`,
      );
    return choice;
  }
  if (p.text === undefined) throw new HostError(ErrorCode.InvalidArgument, "an answer needs text or a choice");
  return p.text;
}
