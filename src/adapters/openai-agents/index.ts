// `harnesshost/openai-agents`: durable hosting for OpenAI Agents SDK agents (docs/integrations.md §2).
// Invariant: this entry point is the only module that loads `@openai/agents`; the core never imports it.
export { agentsOf, openAIAgentsHarness, openAIAgentsToolExecutor, type OpenAIAgentsHarnessInit } from "./harness.js";
export { hostMessagesOf, hostToolsOf, outputOf } from "./convert.js";
export { fileApplied, memoryApplied, type AppliedResult, type AppliedStore } from "../durable/applied.js";
