// docs/integrations.md is executed: each "before" and "after" block is its example file's code,
// verbatim, and the agent answers a question the same way called directly (before) and hosted (after),
// with the same mock model.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { aiSdkModelProvider } from "../../src/adapters/ai-sdk/index.js";
import { textMessage } from "../../src/model/text.js";
import type { ModelProvider } from "../../src/model/types.js";
import * as aiSdk from "../../docs/examples/ai-sdk-agent.js";
import * as agents from "../../docs/examples/openai-agents-agent.js";
import { closeAll, openTestHost, signal } from "../tiers/helpers.js";

const repo = resolve(import.meta.dirname, "../..");
const guide = () => readFileSync(join(repo, "docs/integrations.md"), "utf8");
const blocks = (section: string) => {
  const text =
    guide()
      .split(/^## /m)
      .find((s) => s.startsWith(section)) ?? "";
  return [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
};

afterEach(closeAll);

async function hosted(file: string, harness: string, provider: ModelProvider, question: string): Promise<string> {
  const host = await openTestHost(
    { harnesses: [{ name: harness, runtime: "local", target: fileURLToPath(new URL(file, import.meta.url)) }] },
    { model: provider },
  );
  const { uid } = await host.createSession({ harness });
  const out = await host.placer.exec({ session: uid, inputs: [textMessage("user", question)], signal: signal() });
  return out.outputs.at(-1) ?? "";
}

describe("docs/integrations.md", () => {
  it("showsEachExamplesBeforeAndAfterVerbatim", () => {
    for (const [section, file] of [
      ["1. The Vercel AI SDK", "docs/examples/ai-sdk-agent.ts"],
      ["2. The OpenAI Agents SDK", "docs/examples/openai-agents-agent.ts"],
    ] as const) {
      const shown = blocks(section);
      expect(shown, section).toHaveLength(2);
      const source = readFileSync(join(repo, file), "utf8");
      for (const b of shown) expect(source, section).toContain(b);
    }
  });

  it("theAiSdkAgentAnswersAlikeCalledDirectlyAndHosted", async () => {
    const before = await aiSdk.ask(aiSdk.mockModel(), "weather in Oslo?");
    const after = await hosted(
      "../../docs/examples/ai-sdk-agent.ts",
      "weather",
      aiSdkModelProvider(aiSdk.mockModel()),
      "weather in Oslo?",
    );
    expect(before.text).toMatch(/Oslo/);
    expect(after).toBe(before.text);
  });

  it("theAgentsSdkAgentAnswersAlikeRunDirectlyAndHosted", async () => {
    const direct = agents.directModel();
    const before = await agents.ask("weather in Oslo?", direct);
    const after = await hosted(
      "../../docs/examples/openai-agents-agent.ts",
      "agents",
      agents.mockModel(),
      "weather in Oslo?",
    );
    expect(before.finalOutput).toMatch(/Oslo/);
    expect(after).toBe(before.finalOutput);
    expect(direct.calls()).toBe(3);
  });
});
