// Maps a host ModelRequest onto an OpenAI-compatible chat-completions request body. Invariant: the
// mapping is total and deterministic for valid requests, and every request it cannot express
// faithfully is refused with a ModelRequestError (a defect) before anything is sent.
import type { Message, ToolCall, ToolChoice, ToolResult } from "../gen/agentsessions/v1/common_pb.js";
import { ToolChoice_Mode } from "../gen/agentsessions/v1/common_pb.js";
import type { ModelRequest } from "../harness/types.js";
import { messageText } from "./text.js";
import { ModelRequestError } from "./types.js";

export type ChatMessageJson =
  | { role: "system" | "user" | "developer"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCallJson[] }
  | { role: "tool"; tool_call_id: string; content: string };

interface ToolCallJson {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

type ToolChoiceJson = "auto" | "none" | "required" | { type: "function"; function: { name: string } };

/** Params parsed as numbers; everything else not listed below is sent as the string it is. */
const NUMERIC_PARAMS: ReadonlySet<string> = new Set([
  "temperature",
  "top_p",
  "top_k",
  "max_tokens",
  "max_completion_tokens",
  "presence_penalty",
  "frequency_penalty",
  "seed",
  "n",
  "top_logprobs",
]);
/** Params parsed as booleans ("true"/"false"). */
const BOOLEAN_PARAMS: ReadonlySet<string> = new Set(["parallel_tool_calls", "logprobs", "store"]);
/** Body fields the provider owns; a param may not override them. */
const RESERVED_PARAMS: ReadonlySet<string> = new Set([
  "model",
  "messages",
  "stream",
  "stream_options",
  "tools",
  "tool_choice",
]);

function toolResultText(result: ToolResult): string {
  let text = "";
  for (const part of result.content) if (part.part.case === "text") text += part.part.value.text;
  if (text !== "") return text;
  if (result.output !== undefined) return JSON.stringify(result.output);
  if (result.isError) return result.error;
  return "";
}

function toolCallsOf(message: Message): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const part of message.parts) if (part.part.case === "toolCall") calls.push(part.part.value);
  return calls;
}

function toolResultsOf(message: Message): ToolResult[] {
  const results: ToolResult[] = [];
  for (const part of message.parts) if (part.part.case === "toolResult") results.push(part.part.value);
  return results;
}

/** One host message may become several chat messages (each tool result is its own "tool" message). */
function toChatMessages(message: Message): ChatMessageJson[] {
  const text = messageText(message);
  const results = toolResultsOf(message).map(
    (r): ChatMessageJson => ({ role: "tool", tool_call_id: r.id, content: toolResultText(r) }),
  );
  switch (message.role) {
    case "system":
    case "user":
    case "developer":
      return text === "" && results.length > 0 ? results : [...results, { role: message.role, content: text }];
    case "tool":
      if (results.length === 0) throw new ModelRequestError('a "tool" message needs at least one tool_result part');
      return results;
    case "assistant": {
      const calls = toolCallsOf(message).map(
        (c): ToolCallJson => ({
          id: c.id,
          type: "function",
          function: { name: c.tool, arguments: JSON.stringify(c.args ?? {}) },
        }),
      );
      const assistant: ChatMessageJson =
        calls.length > 0
          ? { role: "assistant", content: text === "" ? null : text, tool_calls: calls }
          : { role: "assistant", content: text };
      return [...results, assistant];
    }
    default:
      throw new ModelRequestError(`unsupported message role ${JSON.stringify(message.role)}`);
  }
}

function toolChoiceJson(choice: ToolChoice): ToolChoiceJson | undefined {
  const named = choice.name !== "" ? ({ type: "function", function: { name: choice.name } } as const) : undefined;
  switch (choice.mode) {
    case ToolChoice_Mode.UNSPECIFIED:
      return named;
    case ToolChoice_Mode.AUTO:
      return "auto";
    case ToolChoice_Mode.NONE:
      return "none";
    case ToolChoice_Mode.REQUIRED:
      return named ?? "required";
    default: {
      const exhaustive: never = choice.mode;
      throw new ModelRequestError(`unknown tool choice mode ${String(exhaustive)}`);
    }
  }
}

function paramValue(key: string, raw: string): string | number | boolean {
  if (NUMERIC_PARAMS.has(key)) {
    const n = raw.trim() === "" ? Number.NaN : Number(raw);
    if (!Number.isFinite(n)) throw new ModelRequestError(`param ${key} must be a number`);
    return n;
  }
  if (BOOLEAN_PARAMS.has(key)) {
    if (raw !== "true" && raw !== "false") throw new ModelRequestError(`param ${key} must be "true" or "false"`);
    return raw === "true";
  }
  return raw;
}

/** The JSON body of POST {baseUrl}/chat/completions for `request`. */
export function chatCompletionBody(request: ModelRequest, model: string, stream: boolean): Record<string, unknown> {
  if (model === "") throw new ModelRequestError("no model name: set it on the provider or the request");
  const body: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(request.params ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (RESERVED_PARAMS.has(key)) throw new ModelRequestError(`param ${key} is reserved`);
    body[key] = paramValue(key, raw);
  }
  body["model"] = model;
  body["messages"] = request.messages.flatMap(toChatMessages);
  if (request.tools !== undefined && request.tools.length > 0) {
    body["tools"] = request.tools.map((t) => ({
      type: "function",
      function: {
        name: t.name,
        ...(t.description !== "" ? { description: t.description } : {}),
        parameters: t.inputSchema ?? { type: "object", properties: {} },
      },
    }));
  }
  if (request.toolChoice !== undefined) {
    const choice = toolChoiceJson(request.toolChoice);
    if (choice !== undefined) body["tool_choice"] = choice;
  }
  body["stream"] = stream;
  if (stream) body["stream_options"] = { include_usage: true };
  return body;
}
