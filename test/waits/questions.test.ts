// Harness questions (sink.ask): the turn parks like an approval, the answer fact is validated against
// the recorded options, and resume delivers it — in process (local) and over the wire (spawned).
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors/index.js";
import { questionOf } from "../../src/controller/index.js";
import { closeAll, openTestHost, records, rejectsWithCode, signal, expectChainVerifies } from "../tiers/helpers.js";
import { decide, kinds, newSession, parkTurn } from "./helpers.js";

afterEach(closeAll);
const asker = new URL("./fixtures/asker.ts", import.meta.url).pathname;

describe.each(["local", "spawned"] as const)("questions on the %s runtime", (runtime) => {
  it("records the question and its options, enforces choices, and resume delivers the answer", async () => {
    const host = await openTestHost({ harnesses: [{ name: "asker", runtime, target: asker }] });
    const s = await newSession(host, "asker");
    const ref = await parkTurn(host, s);
    expect(ref.toolCallId).toBe("ask-0");
    expect(await kinds(host, s)).toEqual([
      "EXECUTION_START",
      "INPUT",
      "TOOL_CALL",
      "APPROVAL_REQUEST",
      "LIFECYCLE_SUSPEND",
    ]);
    const call = (await records(host, s))[2]!.event.body.value as Parameters<typeof questionOf>[0];
    expect(questionOf(call)).toEqual({ question: "which colour?", choices: ["red", "blue"], allowFreeText: false });
    const head = (await host.journal.head(s)).seq;
    await rejectsWithCode(decide(host, s, ref, true, "green"), ErrorCode.InvalidArgument);
    await rejectsWithCode(decide(host, s, ref, true, ""), ErrorCode.InvalidArgument);
    expect((await host.journal.head(s)).seq).toBe(head);
    await decide(host, s, ref, true, "blue");
    const resumed = await host.placer.resume(s, signal());
    expect(resumed.turn?.outputs).toEqual(["answer: blue"]);
    const receipt = (await records(host, s)).find((r) => r.event.body.case === "result")!.event.body.value as {
      output?: Record<string, unknown>;
    };
    expect(receipt.output).toEqual({ answer: "blue" });

    // A second turn asks again (call ask-0 of its own execution); declining completes it.
    const ref2 = await parkTurn(host, s, "again");
    await decide(host, s, ref2, false, "not now");
    expect((await host.placer.resume(s, signal())).turn?.outputs).toEqual(["declined"]);
    await expectChainVerifies(host, s);
  });
});
