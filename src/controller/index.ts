// The controller: one turn of a session — live, replayed, or re-driven after a cut (SPEC §5).
export { execTurn, replaySession, resumeTurn } from "./turn.js";
export type { ExecParams, HarnessBinding, ReplayParams, ReplayResult, ResumeParams, TurnResult } from "./turn.js";
export { ModelCallCounter } from "./turn-context.js";
export type { ControllerDeps, TurnObserver } from "./turn-context.js";
export type { ToolCallContext, ToolExecutor } from "./tools.js";
export { projectExecutions, pendingExecution } from "./projection.js";
export type { RecordedExecution, RecordedEffect } from "./projection.js";
export { ev, textMessage, textOf } from "./events.js";
export { newExecutionId, newSessionUid, isSessionUid } from "./ids.js";
