// The stock infer part (docs/agents.md): model → tool calls → results → model … → an answer. The
// invariants: each step is one host-mediated model call carrying the budget's attempts, so the host
// retries expected failures (transport, rate limit) with backoff, runs a defect once and never retries a
// cancellation (docs/protocol.md §16); the step and token budgets are checked before every call; each
// call's estimated tokens are journaled as USAGE, so later turns and replays count the same.
import type { Message, ToolCall, ToolDefinition } from "../gen/agentsessions/v1/common_pb.js";
import { toolMessage } from "./conversation.js";
import type { AgentContext, InferPart } from "./parts.js";

function toolCallsOf(message: Message): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const { part } of message.parts) if (part.case === "toolCall") calls.push(part.value);
  return calls;
}

/** One model call of the loop, metered and journaled with its usage. */
export async function meteredModelCall(
  ctx: AgentContext,
  messages: readonly Message[],
  opts: {
    step: boolean;
    model?: string;
    params?: Record<string, string>;
    offerTools: boolean;
    /** Offer these instead of the agent's tools (an adapter whose framework owns the tools). */
    tools?: readonly ToolDefinition[];
  },
): Promise<Message> {
  ctx.meter.beforeModelCall(opts.step);
  const model = opts.model ?? ctx.model;
  const tools = opts.tools ?? (opts.offerTools ? ctx.tools.definitions : []);
  const response = await ctx.sink.model(
    {
      model,
      messages: [...messages],
      ...(tools.length > 0 ? { tools } : {}),
      params: { ...ctx.meter.params(), ...(opts.params ?? {}) },
    },
    ctx.signal,
  );
  const used = ctx.meter.charge(messages, response.message);
  await ctx.sink.usage(
    {
      $typeName: "agentsessions.v1.Usage",
      model,
      inputTokens: BigInt(used.input),
      outputTokens: BigInt(used.output),
      reasoningTokens: 0n,
    },
    ctx.signal,
  );
  return response.message;
}

/** The stock model loop. */
export function infer(): InferPart {
  return async (ctx: AgentContext, messages: Message[]) => {
    for (let step = 1; ; step++) {
      const answer = await meteredModelCall(ctx, messages, { step: true, offerTools: true });
      messages.push(answer);
      const calls = toolCallsOf(answer);
      if (calls.length === 0) return;
      for (const [index, call] of calls.entries()) {
        const result = await ctx.tools.run(call, step, index, ctx.start, ctx.sink, ctx.signal);
        messages.push(toolMessage(call.id, result));
      }
    }
  };
}
