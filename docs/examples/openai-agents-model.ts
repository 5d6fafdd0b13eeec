// The host's model for docs/examples/openai-agents-agent.ts under `serve` (docs/integrations.md §2):
// `harnesshost serve --harness agents=local:openai-agents-agent.ts --model module:openai-agents-model.ts`.
// Invariant: the default export is a function returning a host model provider — here that file's
// scripted `mockModel()`; any `ModelProvider` (`{ name, invoke }`) serves, a real one included.
import { mockModel } from "./openai-agents-agent.js";

export default mockModel;
