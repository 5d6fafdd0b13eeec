// Items between harnesshost and the OpenAI Agents SDK (docs/integrations.md §2). Invariant: each
// direction is a pure function of its input — the same Runner request always becomes the same
// harnesshost request, so a replayed or re-driven turn hashes to the recorded model input (I0) — and
// the two directions agree on text, function calls and their results, the parts the journal keeps.
import { create } from "@bufbuild/protobuf";
import type { AgentInputItem, AgentOutputItem, ModelRequest as AgentsModelRequest } from "@openai/agents";
import {
  MessageSchema,
  ToolDefinitionSchema,
  type Message,
  type ToolDefinition,
  type ToolResult,
} from "../../gen/agentsessions/v1/common_pb.js";
import { argsOf } from "../durable/args.js";
import { AdapterError } from "../durable/errors.js";
import { schemaCopyOf } from "../durable/schema.js";
import { messageText, partsText, textMessage } from "../../model/text.js";

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((c: { type?: string; text?: string; refusal?: string }) =>
      c.type === "input_text" || c.type === "output_text"
        ? (c.text ?? "")
        : c.type === "refusal"
          ? (c.refusal ?? "")
          : "",
    )
    .join("");
}

function resultText(output: unknown): string {
  if (typeof output === "string") return output;
  if (typeof output === "object" && output !== null && "type" in output) {
    const o = output as { type: string; text?: string };
    if (o.type === "text") return o.text ?? "";
  }
  if (Array.isArray(output)) return output.map((o) => resultText(o)).join("");
  return JSON.stringify(output);
}

/** A Runner's model request as the messages of a harnesshost model request. */
export function hostMessagesOf(request: AgentsModelRequest): Message[] {
  const messages: Message[] = [];
  if (request.systemInstructions) messages.push(textMessage("system", request.systemInstructions));
  const items: readonly AgentInputItem[] =
    typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input;
  for (const item of items) {
    const i = item as { type?: string; role?: string; content?: unknown };
    if (i.type === undefined || i.type === "message") {
      messages.push(
        textMessage(
          i.role === "assistant" ? "assistant" : i.role === "system" ? "system" : "user",
          contentText(i.content),
        ),
      );
      continue;
    }
    if (i.type === "function_call") {
      const c = item as { callId: string; name: string; arguments: string };
      messages.push(
        create(MessageSchema, {
          role: "assistant",
          parts: [{ part: { case: "toolCall", value: { id: c.callId, tool: c.name, args: argsOf(c.arguments) } } }],
        }),
      );
      continue;
    }
    if (i.type === "function_call_result") {
      const r = item as { callId: string; output: unknown };
      messages.push(
        create(MessageSchema, {
          role: "tool",
          parts: [
            {
              part: {
                case: "toolResult",
                value: { id: r.callId, content: [{ part: { case: "text", value: { text: resultText(r.output) } } }] },
              },
            },
          ],
        }),
      );
      continue;
    }
    if (i.type === "reasoning") continue; // not journaled: reasoning stays with the provider
    throw new AdapterError(`${i.type} items are not supported by the harnesshost OpenAI Agents adapter`);
  }
  return messages;
}

/** The Runner's tools and handoffs as harnesshost tool definitions (a handoff is a tool to the model). */
export function hostToolsOf(request: AgentsModelRequest): ToolDefinition[] {
  const defs: ToolDefinition[] = [];
  for (const t of request.tools) {
    if (t.type !== "function")
      throw new AdapterError(`${t.type} tool ${t.name} is not supported by the harnesshost OpenAI Agents adapter`);
    defs.push(
      create(ToolDefinitionSchema, {
        name: t.name,
        description: t.description,
        inputSchema: schemaCopyOf(t.parameters),
      }),
    );
  }
  for (const h of request.handoffs)
    defs.push(
      create(ToolDefinitionSchema, {
        name: h.toolName,
        description: h.toolDescription,
        inputSchema: schemaCopyOf(h.inputJsonSchema),
      }),
    );
  return defs;
}

/** A harnesshost completion as the Runner's output items. */
export function outputOf(message: Message): AgentOutputItem[] {
  const out: AgentOutputItem[] = [];
  const text = messageText(message);
  if (text !== "")
    out.push({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] });
  for (const { part } of message.parts)
    if (part.case === "toolCall")
      out.push({
        type: "function_call",
        callId: part.value.id,
        name: part.value.tool,
        arguments: JSON.stringify(part.value.args ?? {}),
        status: "completed",
      });
  return out;
}

function resultOutput(r: ToolResult): string {
  if (r.isError) return r.error;
  if (r.output !== undefined) return JSON.stringify(r.output);
  return partsText(r.content);
}

/** A rebuilt conversation as the Runner's input items. */
export function inputItemsOf(messages: readonly Message[]): AgentInputItem[] {
  const items: AgentInputItem[] = [];
  const names = new Map<string, string>();
  for (const m of messages) {
    const text = messageText(m);
    if (m.role === "assistant") {
      if (text !== "") items.push({ role: "assistant", status: "completed", content: [{ type: "output_text", text }] });
      for (const { part } of m.parts)
        if (part.case === "toolCall") {
          names.set(part.value.id, part.value.tool);
          items.push({
            type: "function_call",
            callId: part.value.id,
            name: part.value.tool,
            arguments: JSON.stringify(part.value.args ?? {}),
            status: "completed",
          });
        }
      continue;
    }
    if (m.role === "tool") {
      for (const { part } of m.parts)
        if (part.case === "toolResult")
          items.push({
            type: "function_call_result",
            callId: part.value.id,
            name: names.get(part.value.id) ?? "",
            status: "completed",
            output: { type: "text", text: resultOutput(part.value) },
          });
      continue;
    }
    if (m.role === "system") items.push({ role: "system", content: text });
    else items.push({ role: "user", content: text });
  }
  return items;
}
