// The host's model for docs/examples/ai-sdk-agent.ts under `serve` (docs/integrations.md §1):
// `harnesshost serve --harness weather=local:ai-sdk-agent.ts --model module:ai-sdk-model.ts`.
// Invariant: the default export is a function returning a host model provider — here the AI SDK's own
// mock model (that file's `mockModel()`); for a real provider return e.g.
// `aiSdkModelProvider(openai("gpt-4.1-mini"))` instead.
import { aiSdkModelProvider } from "harnesshost/ai-sdk";
import { mockModel } from "./ai-sdk-agent.js";

export default () => aiSdkModelProvider(mockModel());
