// `harnesshost/agent`: build a harness from parts — system, tools, budget, compact, infer
// (docs/agents.md). Invariant: this module only re-exports; the parts live one job per file.
export { agent, type AgentInit } from "./agent.js";
export {
  AgentConfigError,
  budget,
  BudgetExhaustedError,
  estimateTokens,
  Meter,
  type Budget,
  type BudgetInit,
  type BudgetKind,
} from "./budget.js";
export {
  compact,
  DEFAULT_SUMMARY_INSTRUCTIONS,
  summaryMessage,
  type CompactInit,
  type CompactPart,
  type Compacted,
} from "./compact.js";
export {
  conversationOf,
  hostCallId,
  modelCallIdOf,
  SESSION_TOTAL_USAGE,
  toolMessage,
  type Conversation,
} from "./conversation.js";
export { infer, meteredModelCall } from "./infer.js";
export type { AgentContext, InferPart, SystemPart } from "./parts.js";
export { system } from "./system.js";
export {
  tool,
  ToolBox,
  type AgentTool,
  type ApprovalPolicy,
  type LocalResult,
  type LocalToolContext,
  type ToolInit,
} from "./tools.js";
