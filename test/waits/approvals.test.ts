// Approval gates end to end through a real Host, for both tiers: `ask` (stateless, local runtime) and
// `askcounter` (memory tier, spawned node — the park travels over the Harness wire).
import { afterEach, describe, expect, it } from "vitest";
import { ToolResult_Code } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ExecState } from "../../src/gen/agentsessions/v1/session_pb.js";
import { ErrorCode } from "../../src/errors/index.js";
import { sessionView } from "../../src/host/session-proto.js";
import {
  execTurn as controllerExec,
  planDecision,
  resumeTurn,
  SessionLog,
  textMessage,
} from "../../src/controller/index.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { echoModel } from "../../src/model/echo.js";
import { AskAgent } from "../../harnesses/ask/index.js";
import { bind } from "../controller/helpers.js";
import { closeAll, expectChainVerifies, openTestHost, records, rejectsWithCode, signal } from "../tiers/helpers.js";
import { decide, execTurn, kinds, newSession, parkTurn, writesOf } from "./helpers.js";
import { created } from "../journal/sessions.js";

afterEach(closeAll);

describe.each([
  {
    harness: "ask",
    tier: "stateless (local)",
    approved: (_n: number) => "receipt: approved",
    denied: (_n: number) => "receipt: denied",
  },
  {
    harness: "askcounter",
    tier: "memory (spawned)",
    approved: (n: number) => `${n} approved`,
    denied: (n: number) => `${n} denied`,
  },
])("approvals on $harness ($tier)", ({ harness, approved, denied }) => {
  it("parks with the reference journal shape, then approve + resume runs the tool exactly once and continues", async () => {
    const host = await openTestHost();
    const s = await newSession(host, harness);
    const ref = await parkTurn(host, s);
    expect(await kinds(host, s)).toEqual([
      "EXECUTION_START",
      "INPUT",
      "TOOL_CALL",
      "APPROVAL_REQUEST",
      "LIFECYCLE_SUSPEND",
    ]);
    expect(ref.requestSeq).toBe(4);
    const view = await sessionView(host.placer, await host.getSession(s));
    expect(view.execState).toBe(ExecState.EXEC_AWAITING);
    expect(view.pendingApproval).toMatchObject({ executionId: ref.executionId, toolCallId: "w1", requestSeq: 4n });
    expect(writesOf(host, s)).toBe(0);

    const decision = await decide(host, s, ref, true, "looks fine");
    expect(decision.existing).toBe(false);
    expect(decision.record.event.body.case).toBe("approvalResult");
    expect(writesOf(host, s)).toBe(0); // Approve never executes anything
    const afterDecision = await sessionView(host.placer, await host.getSession(s));
    expect(afterDecision.pendingApproval).toBeUndefined();

    const resumed = await host.placer.resume(s, signal());
    expect(resumed.parked).toBeUndefined();
    expect(resumed.turn?.outputs).toEqual([approved(1)]);
    expect(writesOf(host, s)).toBe(1);
    const recs = await records(host, s);
    const receipt = recs.find((r) => r.event.body.case === "result")!.event.body.value as {
      code: number;
      approvalRequestSeq: bigint;
      approvalDecisionSeq: bigint;
    };
    expect(receipt.code).toBe(ToolResult_Code.CODE_UNSPECIFIED);
    expect(receipt.approvalRequestSeq).toBe(4n);
    expect(receipt.approvalDecisionSeq).toBe(BigInt(decision.record.seq));
    expect((await kinds(host, s)).slice(5)).toEqual([
      "APPROVAL_RESULT",
      "TOOL_RESULT",
      "OUTPUT",
      "END",
      "LIFECYCLE_RESUME",
    ]);

    // The next turn continues (the counter counts on from its RAM state), and a denial completes
    // without running the tool.
    const ref2 = await parkTurn(host, s, "second");
    await decide(host, s, ref2, false, "no");
    const second = await host.placer.resume(s, signal());
    expect(second.turn?.outputs).toEqual([denied(2)]);
    expect(writesOf(host, s)).toBe(1);
    const deniedReceipt = (await records(host, s)).filter((r) => r.event.body.case === "result").at(-1)!.event.body
      .value as { code: number; isError: boolean };
    expect(deniedReceipt).toMatchObject({ code: ToolResult_Code.APPROVAL_DENIED, isError: true });
    await expectChainVerifies(host, s);

    // Replay serves every recorded gate: same outputs, no tool, no records. (Replay of a memory actor
    // through one ephemeral node actor is not a feature of the spawned runtime; stateless only.)
    if (harness !== "ask") return;
    const head = (await host.journal.head(s)).seq;
    const replay = await host.placer.replay(s, signal());
    expect(replay.outputs).toEqual([approved(1), denied(2)]);
    expect((await host.journal.head(s)).seq).toBe(head);
    expect(writesOf(host, s)).toBe(1);
  });

  it("a parked resume takes zero steps: no harness, no tool, no record, no fence", async () => {
    const host = await openTestHost();
    const s = await newSession(host, harness);
    const ref = await parkTurn(host, s);
    const runtime = host.registry.resolve(harness).runtime;
    const calls: string[] = [];
    for (const m of ["describe", "capabilities", "create", "restore", "snapshot", "stop"] as const) {
      const original = runtime[m].bind(runtime) as (...a: unknown[]) => unknown;
      (runtime as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => {
        calls.push(m);
        return original(...a);
      };
    }
    const before = await records(host, s);
    const fence = await host.journal.currentFence(s);
    const resumed = await host.placer.resume(s, signal());
    expect(resumed.parked).toEqual(ref);
    expect(resumed.turn).toBeUndefined();
    expect(calls).toEqual([]);
    expect((await records(host, s)).map((r) => r.contentHash)).toEqual(before.map((r) => r.contentHash));
    expect(await host.journal.currentFence(s)).toBe(fence);
    expect(writesOf(host, s)).toBe(0);
  });

  it("new input while parked (or decided but not resumed) is FAILED_PRECONDITION and appends nothing", async () => {
    const host = await openTestHost();
    const s = await newSession(host, harness);
    const ref = await parkTurn(host, s);
    const head = (await host.journal.head(s)).seq;
    await rejectsWithCode(execTurn(host, s, "more"), ErrorCode.FailedPrecondition);
    await decide(host, s, ref, true);
    await rejectsWithCode(execTurn(host, s, "more"), ErrorCode.FailedPrecondition);
    expect((await host.journal.head(s)).seq).toBe(head + 1);
  });
});

describe("Approve errors and retries", () => {
  it("an exact retry returns the same record; a changed decision, a wrong tuple and an unknown session are refused", async () => {
    const host = await openTestHost();
    const s = await newSession(host, "ask");
    const ref = await parkTurn(host, s);
    const first = await decide(host, s, ref, true, "ok");
    const retry = await decide(host, s, ref, true, "ok");
    expect(retry.existing).toBe(true);
    expect(retry.record.seq).toBe(first.record.seq);
    expect(retry.record.contentHash).toBe(first.record.contentHash);
    const head = (await host.journal.head(s)).seq;
    await rejectsWithCode(decide(host, s, ref, false, "ok"), ErrorCode.FailedPrecondition);
    await rejectsWithCode(decide(host, s, ref, true, "changed"), ErrorCode.FailedPrecondition);
    await rejectsWithCode(
      decide(host, s, { ...ref, requestSeq: ref.requestSeq + 1 }, true),
      ErrorCode.FailedPrecondition,
    );
    await rejectsWithCode(decide(host, s, { ...ref, toolCallId: "other" }, true), ErrorCode.FailedPrecondition);
    await rejectsWithCode(decide(host, s, { ...ref, requestSeq: 0 }, true), ErrorCode.InvalidArgument);
    await rejectsWithCode(decide(host, s, { ...ref, executionId: "" }, true), ErrorCode.InvalidArgument);
    await rejectsWithCode(decide(host, "sess-000000000000000000000000", ref, true), ErrorCode.NotFound);
    expect((await host.journal.head(s)).seq).toBe(head);
  });

  it("a gate inherited through fork cannot be decided in the child", async () => {
    const host = await openTestHost();
    const s = await newSession(host, "ask");
    const ref = await parkTurn(host, s);
    const child = `sess-${"ab".repeat(12)}`;
    await host.placer.fork({
      parent: s,
      atSeq: 0,
      children: [{ uid: child, project: "default", harness: "ask" }],
      signal: signal(),
    });
    const view = await sessionView(host.placer, await host.getSession(child));
    expect(view.pendingApproval).toBeUndefined();
    await rejectsWithCode(decide(host, child, ref, true), ErrorCode.FailedPrecondition);
  });

  it("a decided call with no executor fails the resume FAILED_PRECONDITION and stays recoverable", async () => {
    const S = "sess-0000000000000000000000aa";
    const journal = await created(new MemoryJournal(), S);
    const binding = bind(new AskAgent(), "ask");
    const parked = await controllerExec(
      { journal, model: echoModel },
      { session: S, binding, fence: await journal.newFence(S), inputs: [textMessage("user", "x")], signal: signal() },
    );
    const ref = parked.parked!;
    const plan = planDecision(SessionLog.of(await journal.readRange(S)), { ...ref, approved: true, reason: "" });
    if (plan.kind !== "append") throw new Error("expected an append");
    await journal.append(S, plan.head, await journal.newFence(S), plan.event);
    const decidedHead = (await journal.head(S)).seq;
    const noTools = resumeTurn(
      { journal, model: echoModel },
      { session: S, binding, fence: await journal.newFence(S), signal: signal() },
    );
    await rejectsWithCode(noTools, ErrorCode.FailedPrecondition);
    // Only the turn's ERROR was added; the decision is still there and a resume with an executor completes it.
    expect((await journal.readRange(S, decidedHead + 1)).map((r) => r.event.body.case)).toEqual(["error"]);
    let runs = 0;
    const tools = {
      execute: async () => {
        runs += 1;
        return { output: { ok: true } };
      },
    };
    const done = await resumeTurn(
      { journal, model: echoModel, tools },
      { session: S, binding, fence: await journal.newFence(S), signal: signal() },
    );
    expect(done?.outputs).toEqual(["receipt: approved"]);
    expect(runs).toBe(1);
  });
});
