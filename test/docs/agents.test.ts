// docs/agents.md is executed: its example module is the file it shows, verbatim, and the agent behaves
// as the guide says — a local tool reported, a host tool run once, a large payment parked at the gate,
// replay with zero model calls.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import calc from "../../docs/examples/calc-agent.js";
import { execTurn, replaySession } from "../../src/controller/index.js";
import type { ToolExecutor } from "../../src/controller/index.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { textMessage } from "../../src/model/text.js";
import { calls, say, ScriptedModel } from "../../src/model/scripted.js";
import { created } from "../journal/sessions.js";

const repo = resolve(import.meta.dirname, "../..");
const S = "sess-0000000000000000000000d1";
const signal = () => new AbortController().signal;

describe("docs/agents.md", () => {
  it("shows docs/examples/calc-agent.ts verbatim", () => {
    const guide = readFileSync(join(repo, "docs/agents.md"), "utf8");
    const file = readFileSync(join(repo, "docs/examples/calc-agent.ts"), "utf8");
    expect(guide).toContain(`\`\`\`ts\n${file}\`\`\``);
  });

  it("the calc agent reports a local tool, runs a host tool once, parks a large payment, replays", async () => {
    const journal = await created(new MemoryJournal(), S);
    const fence = await journal.newFence(S);
    const paid: string[] = [];
    const tools: ToolExecutor = {
      async execute(call) {
        paid.push(call.idempotencyKey);
        return { output: { paid: true } };
      },
    };
    const model = new ScriptedModel([
      calls(["add", { a: 2, b: 3 }]),
      say("5"),
      calls(["pay", { to: "ann", cents: 500 }]),
      say("paid"),
      calls(["pay", { to: "bob", cents: 50_000 }]),
    ]);
    const h = calc();
    const binding = { harness: h, name: "calc", descriptor: await h.describe() };
    const deps = { journal, model, tools };
    const run = (text: string) =>
      execTurn(deps, { session: S, binding, fence, inputs: [textMessage("user", text)], signal: signal() });
    expect((await run("2+3?")).outputs.at(-1)).toBe("5");
    expect((await run("pay ann 5.00")).outputs.at(-1)).toBe("paid");
    expect(paid).toHaveLength(1);
    const parked = await run("pay bob 500.00");
    expect(parked.parked?.toolCallId).toBe("1.0:call_0");
    expect(paid).toHaveLength(1);
    const before = model.calls;
    const replay = await replaySession({ journal }, { session: S, binding, signal: signal() });
    expect(model.calls).toBe(before);
    expect(replay.outputs.filter((t) => t !== "")).toEqual(["5", "paid"]);
  });
});
