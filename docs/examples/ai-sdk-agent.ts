// An existing Vercel AI SDK agent hosted by harnesshost (docs/integrations.md §1): `weather` is a
// harness-local tool, `book` a host tool that needs an operator's approval. Invariant: the agent is
// unchanged but for where its model, tools and messages come from, so every model call and tool call
// is journaled and the agent is STATELESS_REPLAY. `mockModel()` is the AI SDK's own test model,
// scripted to call `weather` once per question and then answer: the tests serve it as the host's model.
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
} from "@ai-sdk/provider";
import { generateText, type LanguageModel, simulateReadableStream, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { aiSdkHarness } from "harnesshost/ai-sdk";
import type { Harness } from "harnesshost/sdk";

export const tools = {
  weather: tool({
    description: "The weather in a city.",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, tempC: city.length + 10 }),
  }),
  book: tool({
    description: "Books a table in a city.",
    inputSchema: z.object({ city: z.string() }),
    needsApproval: true,
    execute: async ({ city }) => `booked in ${city}`,
  }),
};

/** The agent before hosting: an ordinary AI SDK call. */
export function ask(model: LanguageModel, question: string) {
  return generateText({
    model,
    system: "You answer questions about the weather.",
    tools,
    stopWhen: stepCountIs(5),
    prompt: question,
  });
}

/** The same agent hosted: the same call, with the model, tools and messages of the turn. */
export default function weatherAgent(): Harness {
  return aiSdkHarness({
    id: "weather",
    model: "mock-model",
    tools,
    hostTools: ["book"],
    compact: { afterMessages: 24, keepTurns: 1 },
    run: ({ model, tools, messages, signal }) =>
      generateText({
        model,
        system: "You answer questions about the weather.",
        tools,
        messages,
        stopWhen: stepCountIs(5),
        abortSignal: signal,
      }),
  });
}

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/**
 * The scripted answer: a user question calls the tool its first word names when that tool is offered
 * ("book Oslo"), else `weather`, for the city after "in" or else its second word; a tool result → say it.
 */
function answer(options: LanguageModelV3CallOptions): LanguageModelV3GenerateResult {
  const last = options.prompt.at(-1);
  if (last?.role === "tool") {
    const result = last.content.find((c) => c.type === "tool-result");
    const said = result ? JSON.stringify(result.output) : "nothing";
    return {
      content: [{ type: "text", text: `result: ${said}` }],
      finishReason: { unified: "stop", raw: "stop" },
      usage,
      warnings: [],
    };
  }
  const question = last?.role === "user" ? last.content.map((c) => (c.type === "text" ? c.text : "")).join("") : "";
  const [first = "", second] = question.split(" ");
  const named = (options.tools ?? []).some((t) => t.name === first);
  const city = /in (\w+)/.exec(question)?.[1] ?? second ?? "Paris";
  return {
    content: [
      {
        type: "tool-call",
        toolCallId: "call-1",
        toolName: named ? first : "weather",
        input: JSON.stringify({ city }),
      },
    ],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage,
    warnings: [],
  };
}

/** The AI SDK's mock model, scripted as above; it streams a text answer in two chunks. */
export function mockModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    modelId: "mock-model",
    doGenerate: async (options) => answer(options),
    doStream: async (options) => {
      const result = answer(options);
      const chunks: LanguageModelV3StreamPart[] = result.content.flatMap((c): LanguageModelV3StreamPart[] =>
        c.type === "text"
          ? [
              { type: "text-start" as const, id: "t" },
              { type: "text-delta" as const, id: "t", delta: c.text.slice(0, 8) },
              { type: "text-delta" as const, id: "t", delta: c.text.slice(8) },
              { type: "text-end" as const, id: "t" },
            ]
          : c.type === "tool-call"
            ? [c]
            : [],
      );
      return {
        stream: simulateReadableStream<LanguageModelV3StreamPart>({
          chunks: [...chunks, { type: "finish" as const, usage, finishReason: result.finishReason }],
        }),
      };
    },
  });
}
