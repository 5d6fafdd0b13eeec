// The framework adapters against their frameworks' agents and mock models (docs/integrations.md):
// for each, a multi-step tool-calling turn journals every model and tool call; replay is identical
// with zero model calls; streamed text reaches the turn's observer as deltas; a host tool parks at the
// approval gate, approve + resume runs it exactly once, a denial never runs it; a fork's child refuses
// the inherited gated call; a long session compacts and its Starts and requests stay bounded.
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { aiSdkModelProvider, aiSdkToolExecutor, memoryApplied } from "../../src/adapters/ai-sdk/index.js";
import { openAIAgentsToolExecutor } from "../../src/adapters/openai-agents/index.js";
import { compactionOfEvent } from "../../src/projection/compaction.js";
import type { ToolExecutor } from "../../src/controller/index.js";
import { ErrorCode } from "../../src/errors/index.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { Host } from "../../src/host/host.js";
import type { ModelProvider } from "../../src/model/types.js";
import { textMessage } from "../../src/model/text.js";
import {
  childMetas,
  closeAll,
  expectChainVerifies,
  openTestHost,
  records,
  rejectsWithCode,
  signal,
} from "../tiers/helpers.js";
import * as aiSdk from "../../docs/examples/ai-sdk-agent.js";
import * as agents from "../../docs/examples/openai-agents-agent.js";
import { startSizes } from "./fixtures/start-sizes.js";

afterEach(closeAll);

interface Adapter {
  readonly name: string;
  readonly file: string;
  /** The host's model and how many times it was called. */
  model(): { provider: ModelProvider; calls: () => number };
  executor(): ToolExecutor;
  /** The records of one question about Oslo's weather, after EXECUTION_START and INPUT. */
  readonly weatherTurn: readonly string[];
  readonly weatherAnswer: RegExp;
  /** The ids of the turn's TOOL_RESULTs: each tool call's, and each handoff's. */
  readonly toolResultIds: readonly string[];
}

const step = ["MODEL_CALL", "OUTPUT", "USAGE"];
const ADAPTERS: Adapter[] = [
  {
    name: "ai-sdk",
    file: "../../docs/examples/ai-sdk-agent.ts",
    model() {
      const m = aiSdk.mockModel();
      return { provider: aiSdkModelProvider(m), calls: () => m.doGenerateCalls.length + m.doStreamCalls.length };
    },
    executor: () => aiSdkToolExecutor(aiSdk.tools, memoryApplied()),
    weatherTurn: [...step, "TOOL_RESULT", ...step, "END"],
    weatherAnswer: /^result: .*"city":"Oslo","tempC":14/,
    toolResultIds: ["1.0:call-1"],
  },
  {
    name: "openai-agents",
    file: "../../docs/examples/openai-agents-agent.ts",
    model() {
      const m = agents.mockModel();
      return { provider: m, calls: () => m.calls };
    },
    executor: () => openAIAgentsToolExecutor(agents.triage, memoryApplied()),
    // triage hands off (a model call whose answer is the handoff, its result recorded), then the weather
    // agent's two steps.
    weatherTurn: [...step, "TOOL_RESULT", ...step, "TOOL_RESULT", ...step, "END"],
    weatherAnswer: /^result: \{"city":"Oslo","tempC":14\}$/,
    toolResultIds: ["1.0:h1", "2.0:call-1"],
  },
];

function counted(exec: ToolExecutor): ToolExecutor & { runs: string[] } {
  const runs: string[] = [];
  return {
    runs,
    execute: async (call, ctx) => {
      runs.push(call.tool);
      return exec.execute(call, ctx);
    },
  };
}

/** A host serving `a`'s example (or, `watched`, the example with its Starts recorded in startSizes). */
async function hostFor(a: Adapter, watched = false) {
  const model = a.model();
  const executor = counted(a.executor());
  const sizes: number[] = [];
  const provider: ModelProvider = {
    name: model.provider.name,
    invoke: (req, opts) => {
      sizes.push(req.messages.length);
      return model.provider.invoke(req, opts);
    },
  };
  const host = await openTestHost(
    {
      harnesses: [
        {
          name: "agent",
          runtime: "local",
          target: fileURLToPath(new URL(watched ? `./fixtures/watched-${a.name}.ts` : a.file, import.meta.url)),
        },
      ],
    },
    { model: provider, tools: executor },
  );
  return { host, calls: model.calls, executor, sizes };
}

function exec(host: Host, session: string, text: string, deltas?: string[]) {
  return host.placer.exec({
    session,
    inputs: [textMessage("user", text)],
    signal: signal(),
    ...(deltas ? { observer: { onDelta: (_e: string, chunk: string) => void deltas.push(chunk) } } : {}),
  });
}

const kinds = (recs: { event: { kind: EventKind } }[]) =>
  recs.map((r) => EventKind[r.event.kind].replace("EVENT_", ""));

describe.each(ADAPTERS)("$name adapter", (a) => {
  it("aMultiStepToolCallingTurnJournalsEveryModelAndToolCall", async () => {
    const { host, calls } = await hostFor(a);
    const { uid: s } = await host.createSession({ harness: "agent" });
    const out = await exec(host, s, "weather in Oslo?");
    expect(out.outputs.at(-1)).toMatch(a.weatherAnswer);
    const recs = await records(host, s);
    expect(kinds(recs)).toEqual(["EXECUTION_START", "INPUT", ...a.weatherTurn]);
    expect(calls()).toBe(a.weatherTurn.filter((k) => k === "MODEL_CALL").length);
    const results = recs.flatMap((r) => (r.event.body.case === "result" ? [r.event.body.value.id] : []));
    expect(results).toEqual(a.toolResultIds);
    await expectChainVerifies(host, s);
  });

  it("replayIsIdenticalWithZeroModelCalls", async () => {
    const { host, calls } = await hostFor(a);
    const { uid: s } = await host.createSession({ harness: "agent" });
    const live = [
      ...(await exec(host, s, "weather in Oslo?")).outputs,
      ...(await exec(host, s, "and in Rome?")).outputs,
    ];
    const before = calls();
    const head = (await records(host, s)).length;
    const replay = await host.placer.replay(s, signal());
    expect(calls()).toBe(before);
    expect(replay.outputs).toEqual(live);
    expect((await records(host, s)).length).toBe(head);
  });

  it("streamedTextReachesTheExecStreamAsDeltas", async () => {
    const { host } = await hostFor(a);
    const { uid: s } = await host.createSession({ harness: "agent" });
    const deltas: string[] = [];
    const out = await exec(host, s, "weather in Oslo?", deltas);
    expect(deltas.join("")).toContain(out.outputs.at(-1));
  });

  it("anApprovalGatedToolParksApproveResumeRunsItOnceDenyNeverRunsIt", async () => {
    const { host, executor } = await hostFor(a);
    const { uid: s } = await host.createSession({ harness: "agent" });
    const parked = await exec(host, s, "book Oslo");
    expect(parked.parked).toBeDefined();
    expect(executor.runs).toEqual([]);
    await host.placer.approve(s, { ...parked.parked!, approved: true, reason: "ok" });
    const resumed = await host.placer.resume(s, signal());
    expect(resumed.turn?.outputs.at(-1)).toMatch(/^result: .*booked in Oslo/);
    await host.placer.resume(s, signal());
    expect(executor.runs).toEqual(["book"]);

    const { uid: d } = await host.createSession({ harness: "agent" });
    const parked2 = await exec(host, d, "book Rome");
    await host.placer.approve(d, { ...parked2.parked!, approved: false, reason: "no" });
    const denied = await host.placer.resume(d, signal());
    expect(denied.turn?.outputs.at(-1)).toMatch(/^result: .*the operator denied book/);
    expect(executor.runs).toEqual(["book"]);
  });

  it("aForkAfterAToolCallRefusesTheInheritedCallOnResume", async () => {
    const { host, executor } = await hostFor(a);
    const { uid: s } = await host.createSession({ harness: "agent" });
    const parked = await exec(host, s, "book Oslo");
    await host.placer.approve(s, { ...parked.parked!, approved: true, reason: "ok" });
    const recs = await records(host, s);
    const call = recs.find((r) => r.event.kind === EventKind.EVENT_TOOL_CALL)!;
    const { children } = await host.placer.fork({
      parent: s,
      atSeq: recs.at(-1)!.seq,
      children: childMetas(1, "agent"),
      signal: signal(),
    });
    expect(call.seq).toBeLessThan(recs.at(-1)!.seq);
    await rejectsWithCode(host.placer.resume(children[0]!.uid, signal()), ErrorCode.FailedPrecondition);
    expect(executor.runs).toEqual([]);
  });

  it("aLongSessionCompactsAndItsStartsAndRequestsStayBounded", async () => {
    const { host, calls, sizes } = await hostFor(a, true);
    const starts = (startSizes[a.name] ??= []);
    starts.length = 0;
    const { uid: s } = await host.createSession({ harness: "agent" });
    const turns = 36;
    for (let i = 0; i < turns; i++) await exec(host, s, `weather in City${i}?`);
    const compactions = (await records(host, s)).flatMap((r) => compactionOfEvent(r.event) ?? []);
    expect(compactions.length).toBeGreaterThanOrEqual(2);
    // After the first compaction the sizes cycle (grow, compact, grow again): the last third of the
    // session's model requests and Starts are no larger than the largest of its middle third — each
    // third holds a whole cycle of the examples' compaction (docs/integrations.md) — so they do not grow
    // with the session.
    const third = (xs: readonly number[], k: number): number[] =>
      xs.slice(Math.floor((xs.length * k) / 3), Math.floor((xs.length * (k + 1)) / 3));
    expect(Math.max(...third(sizes, 2))).toBeLessThanOrEqual(Math.max(...third(sizes, 1)));
    // Start.history begins after the newest compaction.
    expect(starts).toHaveLength(turns);
    expect(Math.max(...third(starts, 2))).toBeLessThanOrEqual(Math.max(...third(starts, 1)));
    const n = calls();
    await host.placer.replay(s, signal());
    expect(calls()).toBe(n);
  });
});
