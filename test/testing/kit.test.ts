// The testing kit (`harnesshost/testing`, docs/testing.md) does what an author's test needs, on the real
// host: a scripted model whose tool calls park at the approval gate, tools given as functions run once
// per idempotency key, deny and answer, suspend/resume/fork, journal read and verify, replay with zero
// model calls, failed request expectations that cannot hide, and conformance from code.
import { z } from "zod";
import { afterEach, describe, expect, it } from "vitest";
import { agent, tool } from "../../src/agent/index.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import {
  assertConformance,
  calls,
  expecting,
  hostTool,
  lastText,
  openTestHost,
  say,
  type TestHost,
} from "../../src/testing/index.js";
import { REPO } from "../cli/bin.js";
import { join } from "node:path";
import { existsSync } from "node:fs";

const bookArgs = z.object({ room: z.string().min(1) });
const book = tool({ name: "desk.book", description: "Books a room.", args: bookArgs, approval: "always" });
const peek = tool({ name: "desk.peek", description: "Shows a room.", args: bookArgs });
const desk = () => agent({ id: "desk", model: "scripted", system: "You book rooms.", tools: [book, peek] });

const open: TestHost[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

async function host(...args: Parameters<typeof openTestHost>): Promise<TestHost> {
  const t = await openTestHost(...args);
  open.push(t);
  return t;
}

describe("harnesshost/testing", () => {
  it("aScriptedToolCallParksAtTheGateAndTheToolRunsOnceAfterApproval", async () => {
    const t = await host({
      harnesses: { desk },
      model: [
        expecting((req) => expect(lastText(req)).toBe("book room 4"), calls(["desk.book", { room: "4" }])),
        expecting((req) => expect(lastText(req)).toBe('{"booked":"4"}'), say("Room 4 is yours.")),
      ],
      tools: { "desk.book": hostTool({ args: bookArgs, run: ({ room }) => ({ booked: room }) }) },
    });
    const s = await t.session();
    const first = await s.exec("book room 4");
    expect(first.parked).toMatchObject({ kind: "approval", tool: "desk.book", args: { room: "4" } });
    expect(t.toolRuns).toEqual([]);
    await s.approve();
    const done = await s.resume();
    expect(done.text).toBe("Room 4 is yours.");
    expect(await s.resume()).toMatchObject({ outputs: [] });
    expect(t.toolRuns.map((r) => [r.tool, r.args, r.session])).toEqual([["desk.book", { room: "4" }, s.uid]]);
    expect(await s.kinds()).toEqual(
      expect.arrayContaining([
        "INPUT",
        "MODEL_CALL",
        "TOOL_CALL",
        "APPROVAL_REQUEST",
        "APPROVAL_RESULT",
        "TOOL_RESULT",
      ]),
    );
    expect(await s.verify()).toBe((await s.records()).length);
    const modelCalls = t.script.calls;
    expect(await s.replay()).toEqual(expect.arrayContaining(["Room 4 is yours."]));
    expect(t.script.calls).toBe(modelCalls);
    expect(t.script.verify()).toBe(2);
  });

  it("aDeniedCallReachesTheModelAsADenialAndTheToolNeverRuns", async () => {
    const t = await host({
      harnesses: { desk },
      model: [
        calls(["desk.book", { room: "9" }]),
        expecting((req) => expect(lastText(req)).toMatch(/denied/i), say("Sorry, no room 9.")),
      ],
      tools: { "desk.book": () => ({ booked: true }) },
    });
    const s = await t.session();
    await s.exec("book room 9");
    await s.deny("room 9 is closed");
    expect((await s.resume()).text).toBe("Sorry, no room 9.");
    expect(t.toolRuns).toEqual([]);
    t.script.verify();
  });

  it("aFailedRequestExpectationFailsTheTurnAndVerifyThrowsItAgain", async () => {
    const t = await host({
      harnesses: { desk },
      model: [expecting((req) => expect(lastText(req)).toBe("something else"), say("never"))],
    });
    const s = await t.session();
    await expect(s.exec("book room 4")).rejects.toThrow();
    expect(() => t.script.verify()).toThrow(/something else/);
  });

  it("aCallPastTheEndOfTheScriptFailsAndVerifySaysSo", async () => {
    const t = await host({ harnesses: { desk }, model: [] });
    const s = await t.session();
    await expect(s.exec("hi")).rejects.toThrow(/no step left in the script/);
    expect(() => t.script.verify()).toThrow(/no step left/);
  });

  it("anUngatedToolCallRunsOnlyWhenTheOperatorsPolicyListsIt", async () => {
    const model = () => [calls(["desk.peek", { room: "2" }]), say("Room 2 is free.")];
    const tools = { "desk.peek": () => ({ free: true }) };
    const refused = await host({ harnesses: { desk }, model: model(), tools });
    const err = await (await refused.session()).exec("is room 2 free").catch((e: unknown) => e);
    expect(isHostError(err) && err.code).toBe(ErrorCode.PermissionDenied);
    expect(refused.toolRuns).toEqual([]);
    const allowed = await host({ harnesses: { desk }, model: model(), tools, toolsWithoutApproval: ["desk.peek"] });
    expect((await (await allowed.session()).exec("is room 2 free")).text).toBe("Room 2 is free.");
    expect(allowed.toolRuns).toHaveLength(1);
  });

  it("aToolWhoseArgumentsFailItsSchemaIsAnErrorResultAndDoesNotRun", async () => {
    const t = await host({
      harnesses: { desk },
      model: [
        calls(["desk.peek", { room: "" }]),
        expecting((req) => expect(lastText(req)).toMatch(/invalid arguments/), say("bad room")),
      ],
      tools: { "desk.peek": hostTool({ args: bookArgs, run: () => ({ free: true }) }) },
      toolsWithoutApproval: ["desk.peek"],
    });
    expect((await (await t.session()).exec("is room free")).text).toBe("bad room");
    expect(t.toolRuns).toEqual([]);
    t.script.verify();
  });

  it("aQuestionIsAnsweredByChoice", async () => {
    const t = await host();
    const s = await t.session("question");
    const parked = await s.exec("the bike shed");
    expect(parked.parked).toMatchObject({ kind: "question" });
    expect(parked.parked?.choices?.length).toBeGreaterThan(0);
    await expect(s.approve()).rejects.toThrow(/waits on a question/);
    await s.answer({ choice: 1 });
    expect((await s.resume()).text).toBe(`the bike shed: ${parked.parked?.choices?.[0]}`);
  });

  it("suspendResumeAndForkKeepTheConversation", async () => {
    const t = await host({ harnesses: { shout: join(REPO, "docs/examples/shout.ts") } });
    const s = await t.session();
    const a = await s.exec("one");
    await s.suspend();
    expect((await s.info()).computeState).toBe("COLD");
    const b = await s.exec("two");
    const [child] = await s.fork({ atSeq: 0 });
    const c = await child!.exec("three");
    expect([a.text, b.text, c.text].every((x) => x !== "")).toBe(true);
    expect((await child!.info()).parentUid).toBe(s.uid);
    await child!.verify();
  });

  it("aMemoryHarnessModuleOnTheSpawnedRuntimeKeepsItsRamAcrossASuspend", async () => {
    const tally = join(REPO, "docs/examples/tally.ts");
    const t = await host({ harnesses: { tally: { module: tally, runtime: "spawned" } } });
    const s = await t.session();
    await s.exec("a b");
    await s.suspend();
    expect((await s.exec("a")).text).toBe("a=2 (3 words)");
    const local = await host({ harnesses: { tally } });
    await expect((await local.session()).exec("a")).rejects.toThrow(/memory/i);
  }, 120_000);

  it("harnessesAreGivenAsObjectsFactoriesOrModulePaths", async () => {
    const object = desk();
    const t = await host({
      harnesses: { one: object, each: desk, shout: join(REPO, "docs/examples/shout.ts") },
      model: [say("a"), say("b")],
    });
    expect((await (await t.session("one")).exec("x")).text).toBe("a");
    expect((await (await t.session("each")).exec("x")).text).toBe("b");
    await expect(t.session()).rejects.toThrow(/name the harness/);
  });

  it("aBadToolDefinitionIsRefusedBeforeAnythingOpens", async () => {
    const bad = { "desk.book": { args: z.string(), run: () => ({}) } } as never;
    const err = await openTestHost({ tools: bad }).catch((e: unknown) => e);
    expect(isHostError(err) && err.code).toBe(ErrorCode.InvalidArgument);
    expect(String(err)).toMatch(/tool desk\.book: .*zod 4 object schema/s);
    await expect(openTestHost({ tools: { "demo.write": () => ({}) } })).rejects.toThrow(/built into the host/);
  });

  it("closeRemovesTheTemporaryDataDirectory", async () => {
    const t = await openTestHost();
    const dir = t.host.config.dataDir;
    expect(existsSync(dir)).toBe(true);
    await t.close();
    expect(existsSync(dir)).toBe(false);
  });

  it("conformanceIsCallableFromCode", async () => {
    const report = await assertConformance({ harness: join(REPO, "docs/examples/shout.ts"), turns: 2 });
    expect(report.failed).toBe(0);
    await expect(
      assertConformance({ harness: join(REPO, "harnesses/fixtures/nondeterministic-model.ts"), turns: 2 }),
    ).rejects.toThrow(/checks failed\n {2}\S+: /);
  }, 240_000);
});
