// Validates chat-completions answers (streamed chunks or one JSON body) and assembles them into a
// host ModelResponse. Invariant: the assembled message holds exactly the text and tool calls the
// provider sent, tool-call fragments merged by index in order; anything malformed is a
// ModelRequestError (a defect), never silently dropped.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import { MessageSchema, PartSchema, UsageSchema, type Part } from "../gen/agentsessions/v1/common_pb.js";
import type { ModelResponse } from "../harness/types.js";
import { ModelRequestError, ModelUnavailableError } from "./types.js";

const tokenCount = z.number().int().nonnegative();

const UsageJson = z
  .object({
    prompt_tokens: tokenCount.nullish(),
    completion_tokens: tokenCount.nullish(),
    completion_tokens_details: z.object({ reasoning_tokens: tokenCount.nullish() }).nullish(),
  })
  .nullish();

const ToolCallFragmentJson = z.object({
  index: z.number().int().nonnegative().nullish(),
  id: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

const ChunkJson = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        index: z.number().int().nullish(),
        delta: z
          .object({ content: z.string().nullish(), tool_calls: z.array(ToolCallFragmentJson).nullish() })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: UsageJson,
  error: z.unknown().optional(),
});

const CompletionJson = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        index: z.number().int().nullish(),
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string().nullish(),
                function: z.object({ name: z.string(), arguments: z.string().nullish() }),
              }),
            )
            .nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: UsageJson,
});

interface PendingCall {
  id: string;
  name: string;
  args: string;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ModelRequestError(`malformed ${what}: not JSON`, { cause: err });
  }
}

function parseArgs(raw: string, tool: string): JsonObject {
  const value = raw.trim() === "" ? {} : parseJson(raw, `arguments of tool call ${JSON.stringify(tool)}`);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ModelRequestError(`arguments of tool call ${JSON.stringify(tool)} are not a JSON object`);
  }
  return value as JsonObject;
}

/** Accumulates one answer; feed it chunks (streaming) or one completion body, then call result(). */
export class CompletionAssembler {
  private text = "";
  private readonly calls = new Map<number, PendingCall>();
  private usage: z.infer<typeof UsageJson> = undefined;
  private model: string | undefined;
  /** True once a choice reported a finish_reason. */
  finished = false;

  /** Adds one SSE data payload (not "[DONE]"); returns the text delta it carried ("" if none). */
  addChunk(data: string): string {
    const parsed = ChunkJson.safeParse(parseJson(data, "stream chunk"));
    if (!parsed.success) throw new ModelRequestError(`malformed stream chunk: ${z.prettifyError(parsed.error)}`);
    const chunk = parsed.data;
    if (chunk.error !== undefined && chunk.error !== null) {
      // An error event mid-stream is the server giving up on this attempt (overload, upstream reset).
      throw new ModelUnavailableError("model stream reported an error");
    }
    if (chunk.model) this.model = chunk.model;
    if (chunk.usage) this.usage = chunk.usage;
    let delta = "";
    for (const choice of chunk.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue;
      if (choice.finish_reason) this.finished = true;
      const content = choice.delta?.content;
      if (content) delta += content;
      (choice.delta?.tool_calls ?? []).forEach((fragment, position) => {
        const index = fragment.index ?? position;
        const call = this.calls.get(index) ?? { id: "", name: "", args: "" };
        if (fragment.id && call.id === "") call.id = fragment.id;
        if (fragment.function?.name) call.name += fragment.function.name;
        if (fragment.function?.arguments) call.args += fragment.function.arguments;
        this.calls.set(index, call);
      });
    }
    this.text += delta;
    return delta;
  }

  /** Adds a whole non-streamed completion body; returns its text. */
  addCompletion(body: string): string {
    const parsed = CompletionJson.safeParse(parseJson(body, "completion"));
    if (!parsed.success) throw new ModelRequestError(`malformed completion: ${z.prettifyError(parsed.error)}`);
    const completion = parsed.data;
    const choice = completion.choices.find((c) => (c.index ?? 0) === 0) ?? completion.choices[0];
    if (completion.model) this.model = completion.model;
    this.usage = completion.usage;
    this.finished = true;
    this.text += choice?.message.content ?? "";
    (choice?.message.tool_calls ?? []).forEach((c, index) => {
      this.calls.set(index, { id: c.id ?? "", name: c.function.name, args: c.function.arguments ?? "" });
    });
    return choice?.message.content ?? "";
  }

  result(requestedModel: string): ModelResponse {
    const parts: Part[] = [];
    const calls = [...this.calls.entries()].sort(([a], [b]) => a - b);
    if (this.text !== "" || calls.length === 0) {
      parts.push(create(PartSchema, { part: { case: "text", value: { text: this.text } } }));
    }
    for (const [index, call] of calls) {
      if (call.name === "") throw new ModelRequestError(`tool call #${index} has no function name`);
      const value = { id: call.id || `call_${index}`, tool: call.name, args: parseArgs(call.args, call.name) };
      parts.push(create(PartSchema, { part: { case: "toolCall", value } }));
    }
    const message = create(MessageSchema, { role: "assistant", parts });
    if (!this.usage) return { message };
    const usage = create(UsageSchema, {
      model: this.model ?? requestedModel,
      inputTokens: BigInt(this.usage.prompt_tokens ?? 0),
      outputTokens: BigInt(this.usage.completion_tokens ?? 0),
      reasoningTokens: BigInt(this.usage.completion_tokens_details?.reasoning_tokens ?? 0),
    });
    return { message, usage };
  }
}
