// The controller: one turn of a session — live, replayed, or re-driven after a cut (docs/protocol.md §5.4, §6).
export { execTurn, replaySession, resumeTurn, resumeRefusal, classifyTurnFailure } from "./turn.js";
export type { ExecParams, HarnessBinding, ReplayParams, ReplayResult, ResumeParams, TurnResult } from "./turn.js";
export { ModelCallCounter } from "./turn-context.js";
export type { ControllerDeps, TurnObserver } from "./turn-context.js";
export type { ToolCallContext, ToolExecutor } from "./tools.js";
export { projectExecutions, pendingExecution, SessionLog } from "../projection/session-log.js";
export type {
  RecordedExecution,
  RecordedEffect,
  PendingTurn,
  Trailing,
  RestartPoint,
  SuspendPoint,
  Gate,
  GateState,
  Owner,
} from "../projection/session-log.js";
export { ev, textMessage, textOf } from "./events.js";
export { newExecutionId, newSessionUid, isSessionUid } from "./ids.js";
export {
  ApprovalParkedError,
  isApprovalParked,
  sameRef,
  planDecision,
  checkAnswer,
  parkDetail,
  deniedReceipt,
  receiptMatchesDecision,
  DENIED_TEXT,
  attachDecision,
  decisionOf,
} from "./approvals.js";
export type { ReceiptDecision, ApprovalRef, ApprovalDecision, DecisionPlan } from "./approvals.js";
export { ASK_TOOL, askCall, questionOf, answerOf } from "./questions.js";
export type { Question } from "./questions.js";
