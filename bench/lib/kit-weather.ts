// The adapters' example agents written natively against the agent kit (bench/figures/adapters.ts's
// third side): the same tools, prompts, compaction and model calls per turn as docs/examples/
// ai-sdk-agent.ts and openai-agents-agent.ts, with no framework in between. Invariant: on the same host
// and the same mock model each makes the same journaled records per turn as its adapter's agent
// (`weather`: model, tool, model; `triage`: a handoff step whose result is recorded, then the same),
// so adapter turn ÷ kit turn is what the adapter itself costs over hosting the agent at all.
import { agent, meteredModelCall, system, tool } from "../../src/agent/index.js";
import { toolMessage } from "../../src/agent/conversation.js";
import type { Message, ToolCall } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { Harness } from "../../src/harness/types.js";
import { z } from "zod";

/** `weather`; `asText`: its result as JSON text, as the Agents SDK hands a function tool's value back. */
const weatherTool = (asText: boolean) =>
  tool({
    name: "weather",
    description: "The weather in a city.",
    args: z.object({ city: z.string() }),
    run: ({ city }) => (asText ? JSON.stringify({ city, tempC: city.length + 10 }) : { city, tempC: city.length + 10 }),
  });

const book = tool({
  name: "book",
  description: "Books a table in a city.",
  args: z.object({ city: z.string() }),
  approval: "always",
});

const transfer = tool({
  name: "transfer_to_weather",
  description: "Handoff to the weather agent.",
  args: z.object({}),
  run: () => JSON.stringify({ assistant: "weather" }),
});

const compact = { afterMessages: 12, keepTurns: 1 };

/** docs/examples/ai-sdk-agent.ts's agent, on the kit. */
export function weatherKit(): Harness {
  return agent({
    id: "weather-kit",
    model: "mock-model",
    system: { part: system("You answer questions about the weather.") },
    tools: [weatherTool(false), book],
    compact,
  });
}

function callsOf(m: Message): ToolCall[] {
  return m.parts.flatMap((p) => (p.part.case === "toolCall" ? [p.part.value] : []));
}

/** docs/examples/openai-agents-agent.ts's triage → weather graph, on the kit: a handoff step, then the weather loop. */
export function triageKit(): Harness {
  const weather = weatherTool(true);
  const agents = [
    { system: system("Hand weather questions to the weather agent."), tools: [transfer.definition] },
    { system: system("You answer questions about the weather."), tools: [weather.definition, book.definition] },
  ];
  return agent({
    id: "triage-kit",
    model: "mock-model",
    tools: [weather, book, transfer],
    compact,
    infer: async (ctx, messages) => {
      let current = agents[0]!;
      for (let step = 1; ; step++) {
        const request = [...current.system(ctx.start), ...messages];
        const answer = await meteredModelCall(ctx, request, { step: true, offerTools: false, tools: current.tools });
        messages.push(answer);
        const calls = callsOf(answer);
        if (calls.length === 0) return;
        for (const [index, call] of calls.entries()) {
          const result = await ctx.tools.run(call, step, index, ctx.start, ctx.sink, ctx.signal);
          messages.push(toolMessage(call.id, result));
          if (call.tool === transfer.name) current = agents[1]!;
        }
      }
    },
  });
}
