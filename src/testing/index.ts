// `harnesshost/testing`: the testing kit for authors' own tests (docs/testing.md) — an in-process host,
// a scripted model, tool executors as functions, session helpers, conformance from code. Invariant:
// this module only re-exports, and nothing it loads imports a test framework.
export { openTestHost, TestHost, type TestHostOptions } from "./test-host.js";
export { TestSession, recordKind, type PendingGate, type TurnOutcome } from "./test-session.js";
export type { HarnessSource } from "./harness-sources.js";
export type { ToolFunction, ToolRun } from "./tools.js";
export { assertConformance, conformance } from "./conformance.js";
export {
  calls,
  expecting,
  lastText,
  say,
  ScriptExhaustedError,
  ScriptedModel,
  type Fallback,
  type ScriptStep,
} from "../model/scripted.js";
export { hostTool, type HostTool, type HostToolContext, type HostToolOutput } from "../controller/host-tools.js";
export { messageText, textMessage } from "../model/text.js";
export type { ModelRequest } from "../model/types.js";
export type { Report as ConformanceReport } from "../conformance/types.js";
