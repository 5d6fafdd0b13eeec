// Regression tests for the scenarios of the session-log projection (docs/protocol.md §5.8), each through a
// real Host on SQLite: at-most-once effects and honest gates across fork, suspend, resume and cancel.
// Scenario names (A, A', B, C, C2, D, E) are the ones the projection's rules were written against.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { textMessage } from "../../src/controller/index.js";
import { DemoWriteExecutor, readDemoWrites } from "../../harnesses/ask/demo-write.js";
import { ErrorCode } from "../../src/errors/index.js";
import { ExecState } from "../../src/gen/agentsessions/v1/session_pb.js";
import type { Host } from "../../src/host/host.js";
import { sessionView } from "../../src/host/session-proto.js";
import { NEWLINE_CALL_ID } from "../fixtures/harnesses/newline-gate.js";
import {
  childMetas,
  closeAll,
  expectChainVerifies,
  fixturePath,
  openTestHost,
  rejectsWithCode,
  signal,
} from "../tiers/helpers.js";
import { decide, execTurn, kinds, newSession, parkTurn, writesOf } from "../waits/helpers.js";
import { CutExecutor } from "./cut-executor.js";

afterEach(closeAll);

const HARNESSES = [
  { name: "writer", runtime: "local" as const, target: fixturePath("writer.ts") },
  { name: "newlinegate", runtime: "local" as const, target: fixturePath("newline-gate.ts") },
];

/** A host whose tool executor can cut a turn after the real demo.write ran (same data dir: same writes file). */
async function cuttableHost(
  dataDir = mkdtempSync(join(tmpdir(), "hh-projection-")),
): Promise<{ host: Host; tools: CutExecutor }> {
  const tools = new CutExecutor(new DemoWriteExecutor(join(dataDir, "demo-writes.jsonl")));
  // The writer fixture calls demo.write CONTROLLER_MEDIATED: the operator lets it run unattended.
  const host = await openTestHost({ harnesses: HARNESSES, dataDir, toolsWithoutApproval: ["demo.write"] }, { tools });
  return { host, tools };
}

async function fork(host: Host, parent: string, harness: string, count = 1, atSeq = 0): Promise<string[]> {
  const res = await host.placer.fork({ parent, atSeq, children: childMetas(count, harness), signal: signal() });
  return res.children.map((c) => c.uid);
}

/** Every real demo.write of the host's data dir, by idempotency key: at most one per key, tree-wide. */
function writesByKey(host: Host): Map<string, number> {
  const counts = new Map<string, number>();
  for (const w of readDemoWrites(join(host.config.dataDir, "demo-writes.jsonl")))
    counts.set(w.key, (counts.get(w.key) ?? 0) + 1);
  return counts;
}

function expectAtMostOncePerKey(host: Host): void {
  for (const [key, n] of writesByKey(host)) expect(n, `executions of key ${key}`).toBe(1);
}

async function pendingOf(host: Host, session: string) {
  return (await sessionView(host.placer, await host.getSession(session))).pendingApproval;
}

describe("session-log projection scenarios", () => {
  it("A: a grandchild forked from a child whose tool call lost its result refuses Resume; the call runs once", async () => {
    const { host, tools } = await cuttableHost();
    const p = await newSession(host, "writer");
    expect((await execTurn(host, p, "p1")).outputs).toEqual(["written"]);
    const [c] = await fork(host, p, "writer");
    // C's turn runs the executor; the host is lost before TOOL_RESULT is committed.
    const lost = tools.loseNext();
    const hung = host.placer.exec({ session: c!, inputs: [textMessage("user", "c1")], signal: signal() });
    await lost.ran;
    const { host: second } = await cuttableHost(host.config.dataDir);
    expect((await kinds(second, c!)).slice(-2)).toEqual(["INPUT", "TOOL_CALL"]);
    for (const atSeq of [0, (await second.journal.head(c!)).seq]) {
      const [g] = await fork(second, c!, "writer", 1, atSeq);
      const head = (await second.journal.head(g!)).seq;
      const fence = await second.journal.currentFence(g!);
      await rejectsWithCode(second.placer.resume(g!, signal()), ErrorCode.FailedPrecondition);
      expect((await second.journal.head(g!)).seq).toBe(head);
      expect(await second.journal.currentFence(g!)).toBe(fence);
      // The grandchild may go on with new input of its own.
      expect((await execTurn(second, g!, "g1")).outputs).toEqual(["written"]);
    }
    // The child itself re-drives its own call once, with its recorded key (the executor de-duplicates).
    expect((await second.placer.resume(c!, signal())).turn?.outputs).toEqual(["written"]);
    expect(writesOf(second, c!)).toBe(1);
    expectAtMostOncePerKey(second);
    lost.release();
    await hung.catch(() => undefined);
    await expectChainVerifies(second, c!);
  });

  it("A': a grandchild inheriting a parked gate refuses Resume, shows no pending approval and accepts new input", async () => {
    const host = await openTestHost();
    const p = await newSession(host, "ask");
    const ref = await parkTurn(host, p);
    await decide(host, p, ref, true);
    await host.placer.resume(p, signal());
    const [c] = await fork(host, p, "ask");
    const cRef = await parkTurn(host, c!, "c1");
    const [g] = await fork(host, c!, "ask");
    const head = (await host.journal.head(g!)).seq;
    await rejectsWithCode(host.placer.resume(g!, signal()), ErrorCode.FailedPrecondition);
    expect((await host.journal.head(g!)).seq).toBe(head);
    expect(await pendingOf(host, g!)).toBeUndefined();
    await rejectsWithCode(decide(host, g!, cRef, true), ErrorCode.FailedPrecondition);
    // Not stuck: G parks on a gate of its own, which GetSession shows and Approve accepts.
    const gRef = await parkTurn(host, g!, "g1");
    expect(await pendingOf(host, g!)).toMatchObject({
      executionId: gRef.executionId,
      requestSeq: BigInt(gRef.requestSeq),
    });
    await decide(host, g!, gRef, true);
    expect((await host.placer.resume(g!, signal())).turn?.outputs).toEqual(["receipt: approved"]);
    // C's own gate is still C's to decide.
    expect(await pendingOf(host, c!)).toMatchObject({ executionId: cRef.executionId });
    expectAtMostOncePerKey(host);
  });

  it("B: a fork after a decision does not run the parent's approved tool in the child (ask)", async () => {
    const host = await openTestHost();
    const p = await newSession(host, "ask");
    const ref = await parkTurn(host, p);
    await decide(host, p, ref, true);
    const [c] = await fork(host, p, "ask");
    const head = (await host.journal.head(c!)).seq;
    await rejectsWithCode(host.placer.resume(c!, signal()), ErrorCode.FailedPrecondition);
    expect((await host.journal.head(c!)).seq).toBe(head);
    expect(writesOf(host, c!)).toBe(0);
    expect((await host.placer.resume(p, signal())).turn?.outputs).toEqual(["receipt: approved"]);
    expect(writesOf(host, p)).toBe(1);
    expectAtMostOncePerKey(host);
  });

  it("B: a fork of two after a decision does not run the parent's approved tool in either child (askcounter)", async () => {
    const host = await openTestHost();
    const p = await newSession(host, "askcounter");
    await decide(host, p, await parkTurn(host, p), true);
    expect((await host.placer.resume(p, signal())).turn?.outputs).toEqual(["1 approved"]);
    await decide(host, p, await parkTurn(host, p, "second"), true);
    const children = await fork(host, p, "askcounter", 2);
    for (const c of children) await rejectsWithCode(host.placer.resume(c, signal()), ErrorCode.FailedPrecondition);
    expect((await host.placer.resume(p, signal())).turn?.outputs).toEqual(["2 approved"]);
    expect(children.map((c) => writesOf(host, c))).toEqual([0, 0]);
    expect(writesOf(host, p)).toBe(2);
    expectAtMostOncePerKey(host);
  });

  it("C: after Suspend of a decided-but-unresumed session, new input is refused until Resume gives the gate its receipt", async () => {
    const host = await openTestHost();
    const s = await newSession(host, "ask");
    const ref = await parkTurn(host, s);
    await decide(host, s, ref, true);
    await host.placer.suspend(s, signal());
    const head = (await host.journal.head(s)).seq;
    await rejectsWithCode(execTurn(host, s, "more"), ErrorCode.FailedPrecondition);
    expect((await host.journal.head(s)).seq).toBe(head);
    expect((await host.placer.resume(s, signal())).turn?.outputs).toEqual(["receipt: approved"]);
    expect(writesOf(host, s)).toBe(1);
    await parkTurn(host, s, "more");
  });

  it("C2: after a Resume cancelled while the approved executor ran, new input is refused and the next Resume receipts the gate without a second write", async () => {
    const { host, tools } = await cuttableHost();
    const s = await newSession(host, "ask");
    const ref = await parkTurn(host, s);
    await decide(host, s, ref, true);
    const abort = new AbortController();
    tools.cutNext(abort);
    await rejectsWithCode(host.placer.resume(s, abort.signal), ErrorCode.Cancelled);
    expect((await kinds(host, s)).at(-1)).toBe("ERROR");
    expect(writesOf(host, s)).toBe(1);
    await rejectsWithCode(execTurn(host, s, "more"), ErrorCode.FailedPrecondition);
    expect((await host.placer.resume(s, signal())).turn?.outputs).toEqual(["receipt: approved"]);
    expect(writesOf(host, s)).toBe(1);
    await parkTurn(host, s, "more");
    await expectChainVerifies(host, s);
  });

  it("D: a memory turn re-driven after a cancelled Resume restarts from its turn-start checkpoint (change applied once)", async () => {
    const { host, tools } = await cuttableHost();
    const s = await newSession(host, "askcounter");
    await decide(host, s, await parkTurn(host, s), true);
    expect((await host.placer.resume(s, signal())).turn?.outputs).toEqual(["1 approved"]);
    await decide(host, s, await parkTurn(host, s, "second"), true);
    const abort = new AbortController();
    tools.cutNext(abort);
    await rejectsWithCode(host.placer.resume(s, abort.signal), ErrorCode.Cancelled);
    expect((await host.placer.resume(s, signal())).turn?.outputs).toEqual(["2 approved"]);
    expect(writesOf(host, s)).toBe(2);
    // And the actor goes on from there.
    await decide(host, s, await parkTurn(host, s, "third"), false);
    expect((await host.placer.resume(s, signal())).turn?.outputs).toEqual(["3 denied"]);
  });

  it("E: a gated call id containing a newline is shown as pending, blocks new input and is decided by its exact tuple", async () => {
    const host = await openTestHost({ harnesses: HARNESSES });
    const s = await newSession(host, "newlinegate");
    const ref = await parkTurn(host, s);
    expect(ref.toolCallId).toBe(NEWLINE_CALL_ID);
    const view = await sessionView(host.placer, await host.getSession(s));
    expect(view.execState).toBe(ExecState.EXEC_AWAITING);
    expect(view.pendingApproval).toMatchObject({ toolCallId: NEWLINE_CALL_ID, requestSeq: BigInt(ref.requestSeq) });
    await rejectsWithCode(execTurn(host, s, "more"), ErrorCode.FailedPrecondition);
    await decide(host, s, ref, true);
    expect((await host.placer.resume(s, signal())).turn?.outputs).toEqual(["receipt: approved"]);
    expect(writesOf(host, s)).toBe(1);
  });
});
