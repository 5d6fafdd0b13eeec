// `harnesshost/ai-sdk`: durable hosting for Vercel AI SDK agents (docs/integrations.md). Invariant: this
// entry point is the only module that loads `ai`; the core package never imports it.
export { aiSdkHarness, aiSdkToolExecutor, type AiSdkHarnessInit, type AiSdkTurn } from "./harness.js";
export { aiSdkModelProvider, modelFailureOf } from "./provider.js";
export { fileApplied, memoryApplied, type AppliedResult, type AppliedStore } from "../durable/applied.js";
