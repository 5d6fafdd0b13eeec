// Messages between harnesshost and the AI SDK (docs/integrations.md). Invariant: each direction is a
// pure function of its input — the same AI SDK prompt always becomes the same harnesshost request, so
// a replayed or re-driven turn hashes to the recorded model input (I0) — and the two directions agree
// on text, tool calls and tool results, the parts the journal keeps.
import { create } from "@bufbuild/protobuf";
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
} from "@ai-sdk/provider";
import type { ModelMessage } from "ai";
import {
  MessageSchema,
  ToolDefinitionSchema,
  ToolResult_Code,
  type Message,
  type Part,
  type ToolDefinition,
  type ToolResult,
} from "../../gen/agentsessions/v1/common_pb.js";
import { argsOf } from "../durable/args.js";
import { AdapterError } from "../durable/errors.js";
import { schemaCopyOf } from "../durable/schema.js";
import { messageText, partsText, textPart } from "../../model/text.js";

function resultPart(toolCallId: string, output: LanguageModelV3ToolResultOutput): Part {
  const init: Record<string, unknown> = { id: toolCallId };
  switch (output.type) {
    case "text":
      init["content"] = [{ part: { case: "text", value: { text: output.value } } }];
      break;
    case "json":
      if (typeof output.value === "object" && output.value !== null && !Array.isArray(output.value))
        init["output"] = output.value;
      else init["content"] = [{ part: { case: "text", value: { text: JSON.stringify(output.value) } } }];
      break;
    case "error-text":
      init["isError"] = true;
      init["error"] = output.value;
      break;
    case "error-json":
      init["isError"] = true;
      init["error"] = JSON.stringify(output.value);
      break;
    case "execution-denied":
      init["isError"] = true;
      init["code"] = ToolResult_Code.APPROVAL_DENIED;
      init["error"] = output.reason ?? "denied";
      break;
    case "content":
      init["content"] = output.value.map((c) => ({
        part: { case: "text", value: { text: c.type === "text" ? c.text : JSON.stringify(c) } },
      }));
      break;
  }
  const m = create(MessageSchema, { parts: [{ part: { case: "toolResult", value: init } }] });
  return m.parts[0]!;
}

/** The AI SDK's prompt as the messages of a harnesshost model request. */
export function hostMessagesOf(prompt: LanguageModelV3Prompt): Message[] {
  return prompt.map((m) => {
    switch (m.role) {
      case "system":
        return create(MessageSchema, { role: "system", parts: [textPart(m.content)] });
      case "user":
      case "assistant": {
        const parts: Part[] = [];
        for (const p of m.content) {
          if (p.type === "text") parts.push(textPart(p.text));
          else if (p.type === "tool-call") {
            if (p.providerExecuted) continue;
            const call = create(MessageSchema, {
              parts: [
                { part: { case: "toolCall", value: { id: p.toolCallId, tool: p.toolName, args: argsOf(p.input) } } },
              ],
            });
            parts.push(call.parts[0]!);
          } else if (p.type === "tool-result") parts.push(resultPart(p.toolCallId, p.output));
          else if (p.type === "reasoning")
            continue; // not journaled: the answer's reasoning stays with the provider
          else throw new AdapterError(`${m.role} ${p.type} parts are not supported by the harnesshost AI SDK adapter`);
        }
        return create(MessageSchema, { role: m.role, parts });
      }
      case "tool": {
        const parts: Part[] = [];
        for (const p of m.content) if (p.type === "tool-result") parts.push(resultPart(p.toolCallId, p.output));
        return create(MessageSchema, { role: "tool", parts });
      }
      default: {
        const exhaustive: never = m;
        throw new AdapterError(`unknown message role ${JSON.stringify((exhaustive as { role: string }).role)}`);
      }
    }
  });
}

/** The AI SDK's tool offer as harnesshost tool definitions (provider-defined tools are refused). */
export function hostToolsOf(tools: LanguageModelV3CallOptions["tools"]): ToolDefinition[] {
  return (tools ?? []).map((t) => {
    if (t.type !== "function")
      throw new AdapterError(`provider-defined tool ${t.name} is not supported by the harnesshost AI SDK adapter`);
    return create(ToolDefinitionSchema, {
      name: t.name,
      description: t.description ?? "",
      inputSchema: schemaCopyOf(t.inputSchema),
    });
  });
}

function outputOf(r: ToolResult): LanguageModelV3ToolResultOutput {
  if (r.isError) {
    if (r.code === ToolResult_Code.APPROVAL_DENIED) return { type: "execution-denied", reason: r.error };
    return { type: "error-text", value: r.error };
  }
  if (r.output !== undefined) return { type: "json", value: r.output };
  return { type: "text", value: partsText(r.content) };
}

/** harnesshost messages (a rebuilt conversation, or a host request) as an AI SDK prompt. */
export function promptOf(messages: readonly Message[]): LanguageModelV3Prompt {
  const toolNames = new Map<string, string>();
  const prompt: LanguageModelV3Prompt = [];
  for (const m of messages) {
    const textOfM = messageText(m);
    if (m.role === "system") {
      prompt.push({ role: "system", content: textOfM });
      continue;
    }
    if (m.role === "tool") {
      const content = m.parts.flatMap((p) =>
        p.part.case === "toolResult"
          ? [
              {
                type: "tool-result" as const,
                toolCallId: p.part.value.id,
                toolName: toolNames.get(p.part.value.id) ?? "",
                output: outputOf(p.part.value),
              },
            ]
          : [],
      );
      prompt.push({ role: "tool", content });
      continue;
    }
    if (m.role === "assistant") {
      const content: Extract<LanguageModelV3Prompt[number], { role: "assistant" }>["content"] = [];
      for (const { part } of m.parts) {
        if (part.case === "text") content.push({ type: "text", text: part.value.text });
        if (part.case === "toolCall") {
          toolNames.set(part.value.id, part.value.tool);
          content.push({
            type: "tool-call",
            toolCallId: part.value.id,
            toolName: part.value.tool,
            input: part.value.args ?? {},
          });
        }
      }
      prompt.push({ role: "assistant", content });
      continue;
    }
    prompt.push({ role: "user", content: [{ type: "text", text: textOfM }] });
  }
  return prompt;
}

/** A rebuilt conversation as the messages an AI SDK agent is called with. */
export function modelMessagesOf(messages: readonly Message[]): ModelMessage[] {
  return promptOf(messages) as ModelMessage[];
}

/** A harnesshost completion as AI SDK content. */
export function contentOf(message: Message): LanguageModelV3Content[] {
  const content: LanguageModelV3Content[] = [];
  for (const { part } of message.parts) {
    if (part.case === "text") content.push({ type: "text", text: part.value.text });
    if (part.case === "toolCall")
      content.push({
        type: "tool-call",
        toolCallId: part.value.id,
        toolName: part.value.tool,
        input: JSON.stringify(part.value.args ?? {}),
      });
  }
  return content;
}

/** AI SDK content (a provider's answer) as a harnesshost completion. */
export function completionOf(content: readonly LanguageModelV3Content[]): Message {
  const parts: Part[] = [];
  for (const c of content) {
    if (c.type === "text") parts.push(textPart(c.text));
    if (c.type === "tool-call" && !c.providerExecuted) {
      const call = create(MessageSchema, {
        parts: [{ part: { case: "toolCall", value: { id: c.toolCallId, tool: c.toolName, args: argsOf(c.input) } } }],
      });
      parts.push(call.parts[0]!);
    }
  }
  return create(MessageSchema, { role: "assistant", parts });
}
