// The AI SDK language model a hosted agent is given (docs/integrations.md): a LanguageModelV3 whose
// every call is one journaled sink.model call. Invariants: it never calls a provider itself — the host
// does, through its own model provider, and replay or resume serve the recorded completion (zero
// provider calls); doGenerate and doStream answer the same content, streamed as one text delta (the
// live deltas reach Exec clients from the host's provider, never from here).
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import type { AdapterTurn } from "../durable/turn.js";
import { contentOf, hostMessagesOf, hostToolsOf } from "./convert.js";

const NO_USAGE: LanguageModelV3Usage = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

/** A LanguageModelV3 that answers through the turn's sink; `modelId` is what requests carry. */
export function sinkModel(turn: AdapterTurn, modelId: string): LanguageModelV3 {
  const generate = async (options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> => {
    const answer = await turn.model(hostMessagesOf(options.prompt), hostToolsOf(options.tools));
    const content = contentOf(answer);
    const calls = content.some((c) => c.type === "tool-call");
    return {
      content,
      finishReason: { unified: calls ? "tool-calls" : "stop", raw: undefined },
      usage: NO_USAGE,
      warnings: [],
    };
  };
  return {
    specificationVersion: "v3",
    provider: "harnesshost",
    modelId,
    supportedUrls: {},
    doGenerate: generate,
    async doStream(options): Promise<LanguageModelV3StreamResult> {
      const result = await generate(options);
      const parts: LanguageModelV3StreamPart[] = [{ type: "stream-start", warnings: [] }];
      result.content.forEach((c, i) => {
        if (c.type === "text") {
          const id = `t${i}`;
          parts.push({ type: "text-start", id }, { type: "text-delta", id, delta: c.text }, { type: "text-end", id });
        } else if (c.type === "tool-call") parts.push(c);
      });
      parts.push({ type: "finish", usage: result.usage, finishReason: result.finishReason });
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            for (const p of parts) controller.enqueue(p);
            controller.close();
          },
        }),
      };
    },
  };
}
