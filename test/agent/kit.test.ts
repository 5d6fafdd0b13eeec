// The agent kit's rules (docs/agents.md): construction refuses zero limits; budgets end a turn with a
// journaled RESOURCE_EXHAUSTED naming the budget; the host retries Fail-class model errors with backoff
// within the attempts budget, runs Die-class once and never retries an Interrupt; bad tool arguments
// are a tool error result; a turn replays with zero model calls.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, AgentConfigError, budget, compact, tool } from "../../src/agent/index.js";
import { execTurn, replaySession } from "../../src/controller/index.js";
import type { ToolExecutor } from "../../src/controller/index.js";
import { ErrorCode, type HostError, isHostError } from "../../src/errors/index.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { ModelInterruptedError, ModelRequestError, ModelUnavailableError } from "../../src/model/types.js";
import { messageText, textMessage } from "../../src/model/text.js";
import type { Harness } from "../../src/harness/types.js";
import { calls, say, ScriptedModel } from "../../src/model/scripted.js";
import { created } from "../journal/sessions.js";

const S = "sess-0000000000000000000000a1";
const signal = () => new AbortController().signal;

async function setup(model: ScriptedModel, tools?: ToolExecutor) {
  const journal = await created(new MemoryJournal(), S);
  const fence = await journal.newFence(S);
  return { journal, fence, deps: { journal, model, ...(tools ? { tools } : {}) } };
}

function turn(h: Harness, env: Awaited<ReturnType<typeof setup>>, input: string, sig = signal()) {
  return execTurn(env.deps, {
    session: S,
    binding: { harness: h, name: "kit", descriptor: h.describe() as never },
    fence: env.fence,
    inputs: [textMessage("user", input)],
    signal: sig,
  });
}

async function rejection(p: Promise<unknown>): Promise<HostError> {
  try {
    await p;
  } catch (err) {
    if (isHostError(err)) return err;
    throw err;
  }
  throw new Error("expected a rejection");
}

async function lastError(journal: MemoryJournal): Promise<{ code: number; description: string } | undefined> {
  const last = (await journal.readRange(S)).at(-1)?.event;
  return last?.body.case === "error" ? last.body.value : undefined;
}

const echoTool = tool({
  name: "shout",
  args: z.object({ text: z.string() }),
  run: ({ text }) => text.toUpperCase(),
});

describe("agent kit: construction", () => {
  it("zeroLimitRefusedAtConstruction: every budget limit of 0 is INVALID_ARGUMENT before any session", () => {
    for (const init of [{ stepsPerTurn: 0 }, { modelAttempts: 0 }, { tokensPerTurn: 0 }, { tokensPerSession: 0 }]) {
      expect(() => budget(init)).toThrow(AgentConfigError);
      expect(() => agent({ id: "a", model: "m", budget: init })).toThrow(/must be an integer from 1/);
    }
    expect(() => budget({ modelAttempts: 17 })).toThrow(/from 1 to 16/);
    expect(() => budget({ stepsPerTurn: 1.5 })).toThrow(AgentConfigError);
    expect(() => compact({ afterMessages: 0 })).toThrow(AgentConfigError);
    expect(() => agent({ id: "a", model: "m", tools: [echoTool, echoTool] })).toThrow(/two tools/);
    expect(() => tool({ name: "bad name", args: z.object({}) })).toThrow(AgentConfigError);
    try {
      budget({ stepsPerTurn: 0 });
    } catch (err) {
      expect((err as HostError).code).toBe(ErrorCode.InvalidArgument);
    }
  });
});

describe("agent kit: budgets", () => {
  it("stepsPerTurnExhaustedIsJournaledResourceExhausted", async () => {
    const model = new ScriptedModel([], () => calls(["shout", { text: "again" }]));
    const env = await setup(model);
    const h = agent({ id: "kit", model: "m", tools: [echoTool], budget: { stepsPerTurn: 2 } });
    const err = await rejection(turn(h, env, "go"));
    expect(err.code).toBe(ErrorCode.ResourceExhausted);
    expect(model.calls).toBe(2);
    expect(await lastError(env.journal)).toMatchObject({
      code: 8,
      description: "agent budget exhausted: steps_per_turn (used 2 of 2)",
    });
  });

  it("tokensPerTurnExhaustedIsJournaledResourceExhausted", async () => {
    const model = new ScriptedModel([], () => calls(["shout", { text: "x".repeat(200) }]));
    const env = await setup(model);
    const h = agent({ id: "kit", model: "m", tools: [echoTool], budget: { tokensPerTurn: 100 } });
    const err = await rejection(turn(h, env, "go"));
    expect(err.code).toBe(ErrorCode.ResourceExhausted);
    expect((await lastError(env.journal))?.description).toMatch(
      /^agent budget exhausted: tokens_per_turn \(used \d+ of 100\)$/,
    );
  });

  it("tokensPerSessionCountsEarlierTurnsAndRefusesBeforeAnyModelCall", async () => {
    const model = new ScriptedModel([], () => say("y".repeat(400)));
    const env = await setup(model);
    const h = agent({ id: "kit", model: "m", budget: { tokensPerSession: 50 } });
    await turn(h, env, "first");
    expect(model.calls).toBe(1);
    const err = await rejection(turn(h, env, "second"));
    expect(err.code).toBe(ErrorCode.ResourceExhausted);
    expect(model.calls).toBe(1);
    expect((await lastError(env.journal))?.description).toMatch(/tokens_per_session/);
  });
});

describe("agent kit: infer retries", () => {
  it("failClassRetriedWithBackoffWithinModelAttempts", async () => {
    const model = new ScriptedModel([
      new ModelUnavailableError("rate limited", { status: 429 }),
      new ModelUnavailableError("connection reset"),
      say("ok"),
    ]);
    const env = await setup(model);
    const h = agent({ id: "kit", model: "m", budget: { modelAttempts: 3, retryBackoffMs: 1 } });
    const res = await turn(h, env, "hi");
    expect(res.outputs).toEqual(["ok"]);
    expect(model.calls).toBe(3);
    // The host runs the loop: each attempt is a single provider attempt.
    expect(model.options.map((o) => o.maxAttempts)).toEqual([1, 1, 1]);
    // One journaled call, whatever the attempts; host params never reach the provider.
    const kinds = (await env.journal.readRange(S)).map((r) => EventKind[r.event.kind]);
    expect(kinds.filter((k) => k === "EVENT_MODEL_CALL")).toHaveLength(1);
    expect(Object.keys(model.requests[0]!.params ?? {}).filter((k) => k.startsWith("harnesshost."))).toEqual([]);
  });

  it("failClassStopsAtModelAttempts", async () => {
    const model = new ScriptedModel([], () => {
      throw new ModelUnavailableError("down", { status: 503 });
    });
    const env = await setup(model);
    const h = agent({ id: "kit", model: "m", budget: { modelAttempts: 2, retryBackoffMs: 1 } });
    await rejection(turn(h, env, "hi"));
    expect(model.calls).toBe(2);
  });

  it("dieClassRunsOnce", async () => {
    const model = new ScriptedModel([new ModelRequestError("400 bad request", { status: 400 })]);
    const env = await setup(model);
    const h = agent({ id: "kit", model: "m", budget: { modelAttempts: 5, retryBackoffMs: 1 } });
    await rejection(turn(h, env, "hi"));
    expect(model.calls).toBe(1);
    expect(await lastError(env.journal)).toBeDefined();
  });

  it("interruptNeverRetried", async () => {
    const ac = new AbortController();
    const model = new ScriptedModel([
      () => {
        ac.abort();
        throw new ModelInterruptedError();
      },
    ]);
    const env = await setup(model);
    const h = agent({ id: "kit", model: "m", budget: { modelAttempts: 5, retryBackoffMs: 1 } });
    const err = await rejection(turn(h, env, "hi", ac.signal));
    expect(err.code).toBe(ErrorCode.Cancelled);
    expect(model.calls).toBe(1);
  });
});

describe("agent kit: tools", () => {
  it("badArgumentsBecomeAToolErrorResultNotACrash", async () => {
    const model = new ScriptedModel([calls(["shout", { text: 42 }]), calls(["nope", {}]), say("sorry")]);
    const env = await setup(model);
    const h = agent({ id: "kit", model: "m", tools: [echoTool] });
    const res = await turn(h, env, "go");
    expect(res.outputs.at(-1)).toBe("sorry");
    const results = (await env.journal.readRange(S)).flatMap((r) =>
      r.event.body.case === "result" ? [r.event.body.value] : [],
    );
    expect(results.map((r) => [r.isError, r.error.split(":")[0]])).toEqual([
      [true, "invalid arguments for shout"],
      [true, 'unknown tool "nope"; the tools are'],
    ]);
    // The model saw the error on the next step.
    const fed = model.requests[1]!.messages.at(-1)!.parts[0]!.part;
    expect(fed.case === "toolResult" && fed.value.isError).toBe(true);
  });

  it("hostMediatedToolRunsOnceAndTurnReplaysWithZeroModelCalls", async () => {
    const executed: string[] = [];
    const tools: ToolExecutor = {
      async execute(call) {
        executed.push(call.idempotencyKey);
        return { output: { stored: call.args?.["text"] ?? null } };
      },
    };
    const model = new ScriptedModel([calls(["store", { text: "a" }]), say("stored")]);
    const env = await setup(model, tools);
    const store = tool({ name: "store", args: z.object({ text: z.string() }) });
    const h = agent({ id: "kit", model: "m", tools: [store, echoTool] });
    const first = await turn(h, env, "keep a");
    model.push(calls(["shout", { text: "b" }]), say("B said"));
    const second = await turn(h, env, "shout b");
    expect(executed).toHaveLength(1);
    expect(executed[0]).toMatch(/^[0-9a-f]{16}\/1\.0:call_0$/);
    const before = model.calls;
    const replay = await replaySession(env.deps, {
      session: S,
      binding: { harness: h, name: "kit", descriptor: h.describe() as never },
      signal: signal(),
    });
    expect(model.calls).toBe(before);
    expect(replay.outputs).toEqual([...first.outputs, ...second.outputs]);
    // The second turn's model input held the first turn's call and its result, rebuilt from history.
    expect(model.requests[2]!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect(messageText(model.requests[2]!.messages.at(-1))).toBe("shout b");
  });
});
