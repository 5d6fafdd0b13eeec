// Model providers behind the host (docs/protocol.md §14). Invariant: a `--model` flag resolves to exactly one
// provider — "echo" or an http(s) base URL — and anything else is refused as a bad argument.
import { ErrorCode, HostError, registerSecret } from "../errors/index.js";
import { echoModel } from "./echo.js";
import { openAICompatible } from "./openai.js";
import type { ModelProvider } from "./types.js";

export { echoModel } from "./echo.js";
export { openAICompatible, parseRetryAfterMs, type OpenAICompatibleOptions } from "./openai.js";
export { chatCompletionBody } from "./openai-request.js";
export { abortableSleep, backoffDelayMs, withRetry, type RetryInfo } from "./retry.js";
export { messageText, textMessage } from "./text.js";
export {
  classifyFailure,
  DEFAULT_RETRY_POLICY,
  isNetworkError,
  isTransientHttpStatus,
  ModelInterruptedError,
  ModelRequestError,
  ModelUnavailableError,
  type FailureClass,
  type InvokeOptions,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type RetryPolicy,
  type Sleep,
} from "./types.js";

export interface ModelFlagOptions {
  /** Model name sent to an OpenAI-compatible endpoint (overrides the harness's request). */
  readonly modelName?: string;
  /** Where to read MODEL_API_KEY / OPENAI_API_KEY; default process.env. */
  readonly apiKeyEnv?: NodeJS.ProcessEnv;
}

/** "echo" → the built-in echo model; "http(s)://…" → an OpenAI-compatible endpoint at that base URL. */
export function modelFromFlag(flag: string, opts: ModelFlagOptions = {}): ModelProvider {
  if (flag === "echo") return echoModel;
  if (/^https?:\/\//i.test(flag)) {
    const env = opts.apiKeyEnv ?? process.env;
    const apiKey = env["MODEL_API_KEY"] || env["OPENAI_API_KEY"] || undefined;
    if (apiKey !== undefined) registerSecret(apiKey);
    return openAICompatible({
      baseUrl: flag,
      ...(opts.modelName !== undefined ? { model: opts.modelName } : {}),
      ...(apiKey !== undefined ? { apiKey } : {}),
    });
  }
  throw new HostError(
    ErrorCode.InvalidArgument,
    `--model must be "echo" or an http(s) base URL, got ${JSON.stringify(flag)}`,
  );
}
