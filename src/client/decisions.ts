// How `approve` / `answer` become the exact gate tuple Approve needs (client and in-process CLI alike).
// Invariants: the tuple always comes from the session's pending_approval (never guessed); a choice N
// resolves to the recorded question's N-th choice, and nothing is sent when it does not exist.
import type { Session } from "../gen/agentsessions/v1/session_pb.js";
import type { Question } from "../controller/questions.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { turnOf } from "./turn.js";

export interface PendingTuple {
  readonly executionId: string;
  readonly toolCallId: string;
  readonly requestSeq: number;
}

/** The session's own decided-but-not-resumed gate, from the host's turn annotation. */
function decidedTuple(session: Session): PendingTuple | undefined {
  const t = turnOf(session);
  if (t === undefined || t.status !== "decided" || t.inherited === true || t.gate === undefined) return undefined;
  return { executionId: t.gate.executionId, toolCallId: t.gate.toolCallId, requestSeq: Number(t.gate.requestSeq) };
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
  if (t === undefined || g === undefined || g.executionId !== tuple.executionId || g.toolCallId !== tuple.toolCallId)
    throw new HostError(ErrorCode.FailedPrecondition, `the pending approval (call ${tuple.toolCallId}) is not in view`);
  if (t.wait !== "question" || t.question === undefined)
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `the pending approval (call ${tuple.toolCallId}) is not a question; use approve`,
    );
  return { question: t.question.text, choices: t.question.choices, allowFreeText: t.question.allowFreeText };
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
