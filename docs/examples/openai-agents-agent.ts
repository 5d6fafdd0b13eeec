// An existing OpenAI Agents SDK agent hosted by harnesshost (docs/integrations.md §2): a triage agent
// hands off to a weather agent, which has a harness-local tool (`weather`) and a host tool that needs
// an operator's approval (`book`). Invariant: the agents are unchanged but for how the turn is run, so
// every model call (of either agent) and every tool call is journaled and the agent is
// STATELESS_REPLAY. `mockModel()` is a host model provider scripted like the AI SDK example's: the
// tests serve it as the host's model.
import { Agent, type Model, type ModelProvider as AgentsModelProvider, Runner, tool, Usage } from "@openai/agents";
import { z } from "zod";
import type { ModelProvider } from "harnesshost";
import { hostMessagesOf, hostToolsOf, openAIAgentsHarness, outputOf } from "harnesshost/openai-agents";
import { create, type Harness, MessageSchema, type Message, textMessage } from "harnesshost/sdk";

const say = (text: string): Message => textMessage("assistant", text);
const calls = (tool: string, args: Record<string, string>, id: string): Message =>
  create(MessageSchema, { role: "assistant", parts: [{ part: { case: "toolCall", value: { id, tool, args } } }] });

const weather = tool({
  name: "weather",
  description: "The weather in a city.",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: city.length + 10 }),
});

const book = tool({
  name: "book",
  description: "Books a table in a city.",
  parameters: z.object({ city: z.string() }),
  needsApproval: true,
  execute: async ({ city }) => `booked in ${city}`,
});

export const weatherAgent = new Agent({
  name: "weather",
  model: "mock-model",
  instructions: "You answer questions about the weather.",
  tools: [weather, book],
});

export const triage = new Agent({
  name: "triage",
  model: "mock-model",
  instructions: "Hand weather questions to the weather agent.",
  handoffs: [weatherAgent],
});

/** The agent before hosting: an ordinary Agents SDK run. */
export function ask(question: string, modelProvider: AgentsModelProvider) {
  return new Runner({ modelProvider, tracingDisabled: true }).run(triage, question);
}

/** The same agent hosted: the adapter runs it, turn by turn. */
export default function agentsExample(): Harness {
  return openAIAgentsHarness({
    id: "agents-weather",
    agent: triage,
    hostTools: ["book"],
    compact: { afterMessages: 24, keepTurns: 1 },
  });
}

/** The host's model: triage hands off; the weather agent calls a tool, then says its result. */
export function mockModel(): ModelProvider & { calls: number } {
  const model = {
    name: "agents-mock",
    calls: 0,
    async invoke(request: Parameters<ModelProvider["invoke"]>[0], opts: Parameters<ModelProvider["invoke"]>[1]) {
      model.calls++;
      const last = request.messages.at(-1);
      const lastText = last?.parts.map((p) => (p.part.case === "text" ? p.part.value.text : "")).join("") ?? "";
      const result = last?.parts.find((p) => p.part.case === "toolResult");
      const offered = new Set((request.tools ?? []).map((t) => t.name));
      if (offered.has("transfer_to_weather")) return { message: calls("transfer_to_weather", {}, "h1") };
      if (result?.part.case === "toolResult") {
        const text = result.part.value.content.map((c) => (c.part.case === "text" ? c.part.value.text : "")).join("");
        if (!text.startsWith('{"assistant"')) {
          opts.onDelta?.(`result: ${text}`);
          return { message: say(`result: ${text}`) };
        }
      }
      const question = [...request.messages].reverse().find((m) => m.role === "user");
      const q = question?.parts.map((p) => (p.part.case === "text" ? p.part.value.text : "")).join("") ?? lastText;
      const booking = /^book (\w+)/.exec(q);
      const city = booking?.[1] ?? /in (\w+)/.exec(q)?.[1] ?? "Paris";
      return { message: calls(booking ? "book" : "weather", { city }, "call-1") };
    },
  };
  return model;
}

/** The same scripted answers as an Agents SDK model provider, for running the agent directly. */
export function directModel(): AgentsModelProvider & { calls: () => number } {
  const host = mockModel();
  const model: Model = {
    async getResponse(request) {
      const r = await host.invoke(
        { model: "mock-model", messages: hostMessagesOf(request), tools: hostToolsOf(request) },
        {},
      );
      return { usage: new Usage(), output: outputOf(r.message) as never };
    },
    getStreamedResponse() {
      throw new Error("this mock answers unstreamed runs only");
    },
  };
  return { getModel: () => model, calls: () => host.calls };
}
