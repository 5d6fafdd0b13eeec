// An OpenAI-compatible chat-completions provider over fetch (docs/protocol.md §14.2), no vendor SDK. Invariants:
// each attempt either yields one complete ModelResponse or fails with a classified error (expected,
// defect or interrupt) and only expected ones are retried; text deltas reach onDelta in arrival order;
// neither the API key nor any message content is logged or put into an error message.
import type { ModelResponse } from "../harness/types.js";
import { CompletionAssembler } from "./openai-response.js";
import { chatCompletionBody } from "./openai-request.js";
import { withRetry, type RetryInfo } from "./retry.js";
import { sseData } from "./sse.js";
import {
  DEFAULT_RETRY_POLICY,
  isTransientHttpStatus,
  ModelInterruptedError,
  ModelRequestError,
  ModelUnavailableError,
  type ModelProvider,
  type RetryPolicy,
} from "./types.js";

export interface OpenAICompatibleOptions {
  /** e.g. "https://api.openai.com/v1" or "http://127.0.0.1:8000/v1". */
  readonly baseUrl: string;
  /** Overrides ModelRequest.model when set. */
  readonly model?: string;
  readonly apiKey?: string;
  /** Appended to baseUrl; default "/chat/completions". */
  readonly path?: string;
  /** Header carrying the key; default "Authorization" (value "Bearer <key>"); any other name gets the bare key. */
  readonly authHeader?: string;
  /** Ask for SSE streaming; default true. A server that answers with plain JSON anyway is accepted. */
  readonly stream?: boolean;
  /** Per-attempt limit covering headers and body, ms; expiry is an expected (retried) failure. */
  readonly timeoutMs?: number;
  readonly retry?: RetryPolicy;
  readonly fetch?: typeof fetch;
  /** Observes each retry (attempt number, delay, error) — for metrics; never sees the request. */
  readonly onRetry?: (info: RetryInfo) => void;
}

interface AttemptContext {
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly model: string;
  readonly timeoutMs: number | undefined;
  readonly fetchImpl: typeof fetch;
  readonly now: () => number;
  readonly signal: AbortSignal | undefined;
  readonly onDelta: ((chunk: string) => void) | undefined;
}

function endpointUrl(baseUrl: string, path: string): string {
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new ModelRequestError("model base URL is not a URL");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new ModelRequestError("model base URL must be http(s)");
  return baseUrl.replace(/\/+$/, "") + (path.startsWith("/") ? path : `/${path}`);
}

function networkErrorName(err: unknown): string {
  for (const candidate of [err, err instanceof Error ? err.cause : undefined]) {
    if (
      typeof candidate === "object" &&
      candidate !== null &&
      "code" in candidate &&
      typeof candidate.code === "string"
    ) {
      return candidate.code;
    }
  }
  return err instanceof Error ? err.name : "unknown error";
}

/** Retry-After as milliseconds: `retry-after-ms`, then `retry-after` in seconds or as an HTTP date. */
export function parseRetryAfterMs(headers: Headers, now: () => number): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms.trim());
  const value = headers.get("retry-after")?.trim();
  if (value === undefined || value === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now());
}

/** The provider's own error code/type and a bounded slice of its message; never the request. */
function errorSummary(body: string): string {
  try {
    const parsed = JSON.parse(body) as unknown;
    const error = typeof parsed === "object" && parsed !== null && "error" in parsed ? parsed.error : undefined;
    if (typeof error !== "object" || error === null) return "";
    const fields = error as { code?: unknown; type?: unknown; message?: unknown };
    const label = [fields.type, fields.code].filter((v) => typeof v === "string" && v !== "").join("/");
    const message = typeof fields.message === "string" ? fields.message.slice(0, 200) : "";
    return [label, message].filter((s) => s !== "").join(": ");
  } catch {
    return "";
  }
}

async function httpFailure(response: Response, now: () => number): Promise<Error> {
  const status = response.status;
  const retryAfterMs = parseRetryAfterMs(response.headers, now);
  let detail = "";
  try {
    detail = errorSummary(await response.text());
  } catch {
    // The body could not be read; the status alone classifies the failure.
  }
  const message = `model endpoint answered HTTP ${status}${detail !== "" ? ` (${detail})` : ""}`;
  return isTransientHttpStatus(status)
    ? new ModelUnavailableError(message, { status, retryAfterMs })
    : new ModelRequestError(message, { status });
}

async function* bodyChunks(
  body: ReadableStream<Uint8Array>,
  onError: (err: unknown) => Error,
): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let drained = false;
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (err) {
        drained = true;
        throw onError(err);
      }
      if (next.done) {
        drained = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!drained) await reader.cancel().catch(() => undefined);
  }
}

async function attemptOnce(ctx: AttemptContext): Promise<ModelResponse> {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = (): void => controller.abort(ctx.signal?.reason);
  ctx.signal?.addEventListener("abort", onAbort, { once: true });
  const timer =
    ctx.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, ctx.timeoutMs);
  const transportError = (err: unknown): Error => {
    if (ctx.signal?.aborted) return new ModelInterruptedError("model call cancelled", { cause: err });
    if (timedOut)
      return new ModelUnavailableError(`model call attempt timed out after ${ctx.timeoutMs} ms`, { cause: err });
    return new ModelUnavailableError(`model endpoint unreachable (${networkErrorName(err)})`, { cause: err });
  };
  try {
    let response: Response;
    try {
      response = await ctx.fetchImpl(ctx.url, {
        method: "POST",
        headers: ctx.headers,
        body: ctx.body,
        signal: controller.signal,
      });
    } catch (err) {
      throw transportError(err);
    }
    if (!response.ok) throw await httpFailure(response, ctx.now);
    const assembler = new CompletionAssembler();
    const isSse = (response.headers.get("content-type") ?? "").includes("text/event-stream");
    if (isSse) {
      if (response.body === null) throw new ModelRequestError("model stream has no body");
      let sawDone = false;
      for await (const data of sseData(bodyChunks(response.body, transportError))) {
        if (data === "[DONE]") {
          sawDone = true;
          break;
        }
        const delta = assembler.addChunk(data);
        if (delta !== "") ctx.onDelta?.(delta);
      }
      if (!sawDone && !assembler.finished) throw new ModelUnavailableError("model stream ended before completion");
    } else {
      let text: string;
      try {
        text = await response.text();
      } catch (err) {
        throw transportError(err);
      }
      const content = assembler.addCompletion(text);
      if (content !== "") ctx.onDelta?.(content);
    }
    return assembler.result(ctx.model);
  } finally {
    clearTimeout(timer);
    ctx.signal?.removeEventListener("abort", onAbort);
  }
}

export function openAICompatible(opts: OpenAICompatibleOptions): ModelProvider {
  const url = endpointUrl(opts.baseUrl, opts.path ?? "/chat/completions");
  const stream = opts.stream ?? true;
  const fetchImpl = opts.fetch ?? globalThis.fetch;
  const now = opts.retry?.now ?? Date.now;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: stream ? "text/event-stream, application/json" : "application/json",
  };
  if (opts.apiKey !== undefined && opts.apiKey !== "") {
    const header = opts.authHeader ?? "Authorization";
    headers[header.toLowerCase()] = header.toLowerCase() === "authorization" ? `Bearer ${opts.apiKey}` : opts.apiKey;
  }
  return {
    name: "openai-compatible",
    async invoke(request, { signal, onDelta, maxAttempts }) {
      const model = opts.model ?? request.model;
      const body = JSON.stringify(chatCompletionBody(request, model, stream));
      const ctx = { url, headers, body, model, timeoutMs: opts.timeoutMs, fetchImpl, now, signal, onDelta };
      const policy = opts.retry ?? {};
      const bounded =
        maxAttempts === undefined
          ? policy
          : { ...policy, maxAttempts: Math.min(maxAttempts, policy.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts) };
      return withRetry(() => attemptOnce(ctx), bounded, signal, opts.onRetry);
    },
  };
}
