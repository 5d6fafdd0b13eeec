// Model providers behind the host (docs/protocol.md §14). Invariant: a `--model` flag resolves to exactly one
// provider — "echo", an http(s) base URL, or a model id at a base URL — and anything else (or a
// contradictory set of endpoint flags) is refused as a bad argument.
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
  /** Model name sent to an OpenAI-compatible endpoint given as `--model URL` (overrides the harness's request). */
  readonly modelName?: string;
  /** With `--model ID`: the endpoint's base URL (`--model-url`). Default DEFAULT_MODEL_URL, as the reference. */
  readonly url?: string;
  /** Path appended to the base URL; may carry a query string (`?api-version=…`). Default "/chat/completions". */
  readonly path?: string;
  /** Header carrying the key: "Authorization" (default) gets `Bearer KEY`, any other name (`api-key`) the bare key. */
  readonly authHeader?: string;
  /** Where to read MODEL_API_KEY / OPENAI_API_KEY; default process.env. */
  readonly apiKeyEnv?: NodeJS.ProcessEnv;
}

/** The base URL a model id is sent to when no `--model-url` is given: the reference's default endpoint. */
export const DEFAULT_MODEL_URL = "https://api.openai.com/v1";

function refuse(message: string): HostError {
  return new HostError(ErrorCode.InvalidArgument, message);
}

/**
 * "echo" → the built-in echo model; "http(s)://…" → an OpenAI-compatible endpoint at that base URL
 * (model name from `modelName`, else the harness's request); any other word → that model id, sent to
 * `url` (default DEFAULT_MODEL_URL), as the reference's `-model ID -model-base-url URL` does.
 * "module:FILE" is refused here: serve and Host.open load it (host/model-module.ts).
 */
export function modelFromFlag(flag: string, opts: ModelFlagOptions = {}): ModelProvider {
  const endpointFlags = opts.url !== undefined || opts.path !== undefined || opts.authHeader !== undefined;
  if (flag === "echo") {
    if (endpointFlags) throw refuse("--model-url, --model-path and --model-auth-header need --model ID or --model URL");
    return echoModel;
  }
  if (flag.startsWith("module:"))
    throw refuse(`--model ${flag}: a model module is loaded by serve and Host.open, not here`);
  const isUrl = /^https?:\/\//i.test(flag);
  if (!isUrl && (!/^\S+$/.test(flag) || /^[a-z][a-z0-9+.-]*:\/\//i.test(flag)))
    throw refuse(`--model must be "echo", an http(s) base URL or a model id, got ${JSON.stringify(flag)}`);
  if (isUrl && opts.url !== undefined) throw refuse("--model URL and --model-url exclude each other");
  if (opts.url !== undefined && !/^https?:\/\/\S+$/i.test(opts.url))
    throw refuse(`--model-url must be an http(s) base URL, got ${JSON.stringify(opts.url)}`);
  if (!isUrl && opts.modelName !== undefined)
    throw refuse("--model-name goes with --model URL; with --model ID the id is the model name");
  if (opts.authHeader !== undefined && !/^[A-Za-z0-9-]+$/.test(opts.authHeader))
    throw refuse(`--model-auth-header must be a header name, got ${JSON.stringify(opts.authHeader)}`);
  const env = opts.apiKeyEnv ?? process.env;
  const apiKey = env["MODEL_API_KEY"] || env["OPENAI_API_KEY"] || undefined;
  if (apiKey !== undefined) registerSecret(apiKey);
  const model = isUrl ? opts.modelName : flag;
  return openAICompatible({
    baseUrl: isUrl ? flag : (opts.url ?? DEFAULT_MODEL_URL),
    ...(model !== undefined ? { model } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(opts.path !== undefined ? { path: opts.path } : {}),
    ...(opts.authHeader !== undefined ? { authHeader: opts.authHeader } : {}),
  });
}
