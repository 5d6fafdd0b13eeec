// The host side of the AI SDK adapter (docs/integrations.md): any AI SDK language model as the host's
// model provider (`Host.open(config, { model: aiSdkModelProvider(m) })`). Invariants: one provider
// attempt per invoke (the host owns retries, docs/protocol.md §16.1); text deltas reach the host's
// `onDelta` in arrival order while the completion is assembled whole; every failure maps onto exactly
// one class of §14.3 — an AI SDK APICallError by its status and isRetryable (expected: retried), an
// aborted call an interrupt, anything else a defect (never retried).
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3Content } from "@ai-sdk/provider";
import { APICallError } from "ai";
import {
  ModelInterruptedError,
  ModelRequestError,
  ModelUnavailableError,
  isTransientHttpStatus,
} from "../../model/types.js";
import type { InvokeOptions, ModelProvider, ModelRequest, ModelResponse } from "../../model/types.js";
import { isNetworkError } from "../../model/types.js";
import { completionOf, promptOf } from "./convert.js";

/** Maps an AI SDK failure onto the host's failure classes (expected, defect, interrupt). */
export function modelFailureOf(err: unknown, signal?: AbortSignal): Error {
  if (signal?.aborted || (err instanceof Error && err.name === "AbortError"))
    return new ModelInterruptedError("model call cancelled", { cause: err });
  if (APICallError.isInstance(err)) {
    const status = err.statusCode;
    if (err.isRetryable || (status !== undefined && isTransientHttpStatus(status)))
      return new ModelUnavailableError(err.message, { ...(status !== undefined ? { status } : {}), cause: err });
    return new ModelRequestError(err.message, { ...(status !== undefined ? { status } : {}), cause: err });
  }
  if (isNetworkError(err))
    return new ModelUnavailableError(err instanceof Error ? err.message : String(err), { cause: err });
  return new ModelRequestError(err instanceof Error ? err.message : String(err), { cause: err });
}

function callOptionsOf(request: ModelRequest, signal?: AbortSignal): LanguageModelV3CallOptions {
  const tools = (request.tools ?? []).map((t) => ({
    type: "function" as const,
    name: t.name,
    description: t.description,
    inputSchema: (t.inputSchema ?? { type: "object" }) as never,
  }));
  return {
    prompt: promptOf(request.messages),
    ...(tools.length > 0 ? { tools } : {}),
    ...(signal ? { abortSignal: signal } : {}),
  };
}

/** A host model provider backed by an AI SDK language model. */
export function aiSdkModelProvider(model: LanguageModelV3, opts: { readonly name?: string } = {}): ModelProvider {
  return {
    name: opts.name ?? `ai-sdk:${model.provider}/${model.modelId}`,
    async invoke(request: ModelRequest, invoke: InvokeOptions): Promise<ModelResponse> {
      const options = callOptionsOf(request, invoke.signal);
      try {
        if (!invoke.onDelta) {
          const result = await model.doGenerate(options);
          return { message: completionOf(result.content) };
        }
        const { stream } = await model.doStream(options);
        const content: LanguageModelV3Content[] = [];
        const reader = stream.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          switch (value.type) {
            case "text-start":
              content.push({ type: "text", text: "" });
              break;
            case "text-delta": {
              const last = content.findLast((c) => c.type === "text");
              if (last && last.type === "text") last.text += value.delta;
              else content.push({ type: "text", text: value.delta });
              if (value.delta !== "") invoke.onDelta(value.delta);
              break;
            }
            case "tool-call":
              content.push(value);
              break;
            case "error":
              throw value.error;
            default:
              break;
          }
        }
        return { message: completionOf(content) };
      } catch (err) {
        throw modelFailureOf(err, invoke.signal);
      }
    },
  };
}
