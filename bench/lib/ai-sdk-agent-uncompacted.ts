// docs/examples/ai-sdk-agent.ts's hosted agent with compaction off, as a harness module (a module's
// default export is the harness the host serves), for bench/profile/adapter-turn.ts's `uncompacted`:
// what a long session costs per turn when its conversation grows unbounded. Invariant: it is the
// example's harness — the same id, model, tools, host tools and `run` (the example's `ask` with the
// turn's model, tools and messages) — but for `compact: false`.
import { generateText, stepCountIs } from "ai";
import { aiSdkHarness } from "harnesshost/ai-sdk";
import type { Harness } from "harnesshost/sdk";
import { tools } from "../../docs/examples/ai-sdk-agent.js";

export default function weatherAgentUncompacted(): Harness {
  return aiSdkHarness({
    id: "weather",
    model: "mock-model",
    tools,
    hostTools: ["book"],
    compact: false,
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
