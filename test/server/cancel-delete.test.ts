// Sessions.Cancel and Sessions.DeleteSession over real gRPC on loopback (docs/protocol.md §17, §18): a
// running turn is stopped from another client and recorded as CANCELLED, then resumed; an idle
// session's Cancel is a no-op; a parked wait is withdrawn (the session takes new input, or Resume
// re-drives the turn with its call denied); Delete removes a session for good while its fork children
// keep verifying and running, and is refused while a turn runs.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { EventKind, type LogRecord } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ExecState } from "../../src/gen/agentsessions/v1/session_pb.js";
import { textOf } from "../../src/controller/events.js";
import { collectSnapshotGarbage } from "../../src/host/snapshot-gc.js";
import { codeOf, drain, gatedEchoModel, startFixture, userInput, type Fixture } from "./helpers.js";

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function fixture(opts?: Parameters<typeof startFixture>[0]): Promise<Fixture> {
  fx = await startFixture(opts);
  return fx;
}

async function recordsOf(f: Fixture, session: string): Promise<LogRecord[]> {
  return (await drain(f.sessions.replay({ session }))).items;
}

function outputs(recs: readonly LogRecord[]): string[] {
  return recs.flatMap((r) =>
    r.event?.kind === EventKind.EVENT_OUTPUT && r.event.body.case === "message" ? [textOf(r.event.body.value)] : [],
  );
}

async function parkedAskSession(f: Fixture): Promise<string> {
  const { items, error } = await drain(f.sessions.exec({ harness: "ask", inputs: [userInput("hello")] }));
  expect(error).toBeUndefined();
  const last = items.at(-1);
  const session = last?.update.case === "session" ? last.update.value : undefined;
  expect(session?.pendingApproval).toBeDefined();
  return session?.metadata?.uid ?? "";
}

describe("Cancel", () => {
  it("cancelStopsARunningTurnFromAnotherClient: recorded as ERROR{CANCELLED}, then resume completes it", async () => {
    const gate = gatedEchoModel();
    const f = await fixture({ overrides: { model: gate.model } });
    const uid = (await f.sessions.createSession({})).metadata?.uid ?? "";
    const turn = drain(f.sessions.exec({ session: uid, inputs: [userInput("long")] }));
    await gate.entered;
    const cancelled = await f.sessions.cancel({ session: uid, reason: "operator says stop" });
    expect(cancelled.execState).toBe(ExecState.EXEC_CANCELED);
    const { error } = await turn;
    expect(error?.grpcCode).toBe(GrpcStatus.CANCELLED);
    const recs = await recordsOf(f, uid);
    const last = recs.at(-1)?.event;
    expect(last?.kind).toBe(EventKind.EVENT_ERROR);
    expect(last?.body.case === "error" && last.body.value).toMatchObject({
      code: GrpcStatus.CANCELLED,
      description: "turn cancelled by Cancel: operator says stop",
    });
    // Resume re-drives the cancelled turn: its model call runs once more and the turn completes.
    gate.release();
    await f.sessions.resume({ session: uid });
    expect(outputs(await recordsOf(f, uid))).toEqual(["echo:long"]);
    expect((await f.sessions.getSession({ uid })).execState).toBe(ExecState.EXEC_COMPLETED);
    expect(await f.host.journal.verify(uid)).toMatchObject({ ok: true });
  });

  it("cancelOfAnIdleSessionIsANoOp, and bad requests are refused with nothing changed", async () => {
    const f = await fixture();
    const { items } = await drain(f.sessions.exec({ inputs: [userInput("hi")] }));
    const uid = items[0]?.update.case === "session" ? (items[0].update.value.metadata?.uid ?? "") : "";
    const before = await recordsOf(f, uid);
    const executionId = before[0]?.event?.executionId ?? "";
    const again = await f.sessions.cancel({ session: uid });
    expect(again.execState).toBe(ExecState.EXEC_COMPLETED);
    expect(await f.sessions.cancel({ session: uid, executionId })).toMatchObject({ lastSeq: again.lastSeq });
    expect(await recordsOf(f, uid)).toEqual(before);
    expect(await codeOf(f.sessions.cancel({ session: "" }))).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(await codeOf(f.sessions.cancel({ session: "sess-000000000000000000000000" }))).toBe(GrpcStatus.NOT_FOUND);
    expect(await codeOf(f.sessions.cancel({ session: uid, executionId: "nope" }))).toBe(GrpcStatus.NOT_FOUND);
    expect(await codeOf(f.sessions.cancel({ session: uid, reason: "x".repeat(100_000) }))).toBe(
      GrpcStatus.RESOURCE_EXHAUSTED,
    );
    expect(await recordsOf(f, uid)).toEqual(before);
  });

  it("cancelWithdrawsAParkedWait: the session takes new input at once", async () => {
    const f = await fixture();
    const uid = await parkedAskSession(f);
    const withdrawn = await f.sessions.cancel({ session: uid, reason: "not today" });
    expect(withdrawn.pendingApproval).toBeUndefined();
    expect(withdrawn.execState).toBe(ExecState.EXEC_CANCELED);
    const tail = (await recordsOf(f, uid)).slice(-3).map((r) => r.event);
    expect(tail.map((e) => e?.kind)).toEqual([
      EventKind.EVENT_APPROVAL_RESULT,
      EventKind.EVENT_TOOL_RESULT,
      EventKind.EVENT_ERROR,
    ]);
    expect(tail[0]?.body.case === "approvalResult" && tail[0].body.value).toMatchObject({
      approved: false,
      reason: "wait withdrawn by Cancel: not today",
    });
    // A second Cancel finds nothing left to withdraw.
    expect((await f.sessions.cancel({ session: uid })).lastSeq).toBe(withdrawn.lastSeq);
    // New input starts a new turn (which parks on its own gate, as the ask harness does).
    const next = await drain(f.sessions.exec({ session: uid, inputs: [userInput("again")] }));
    expect(next.error).toBeUndefined();
    expect((await f.sessions.getSession({ uid })).pendingApproval).toBeDefined();
    expect(await f.host.journal.verify(uid)).toMatchObject({ ok: true });
  });

  it("cancelOfADecidedWaitIsRefused: the decision stands and resume continues the turn", async () => {
    const f = await fixture();
    const uid = await parkedAskSession(f);
    const gate = (await f.sessions.getSession({ uid })).pendingApproval;
    await f.sessions.approve({
      session: uid,
      executionId: gate?.executionId ?? "",
      toolCallId: gate?.toolCallId ?? "",
      requestSeq: gate?.requestSeq ?? 0n,
      approved: true,
    });
    const before = await recordsOf(f, uid);
    expect(await codeOf(f.sessions.cancel({ session: uid }))).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(await recordsOf(f, uid)).toEqual(before);
    await f.sessions.resume({ session: uid });
    expect(outputs(await recordsOf(f, uid))).toEqual(["receipt: approved"]);
  });

  it("cancelNamingASupersededTurnIsANoOp: a newer turn replaced the cancelled one", async () => {
    const f = await fixture();
    const uid = await parkedAskSession(f);
    const first = (await f.sessions.getSession({ uid })).pendingApproval?.executionId ?? "";
    await f.sessions.cancel({ session: uid });
    await drain(f.sessions.exec({ session: uid, inputs: [userInput("again")] }));
    const parked = await f.sessions.getSession({ uid });
    expect(parked.pendingApproval?.executionId).not.toBe(first);
    expect((await f.sessions.cancel({ session: uid, executionId: first })).pendingApproval).toBeDefined();
    expect((await f.sessions.getSession({ uid })).lastSeq).toBe(parked.lastSeq);
  });

  it("withdrawnWaitIsAudited: with an audit file the host writes wait.withdrawn at the withdrawal's ERROR", async () => {
    const auditFile = join(mkdtempSync(join(tmpdir(), "hh-audit-")), "audit.jsonl");
    const f = await fixture({ config: { auditFile } });
    const uid = await parkedAskSession(f);
    const gate = (await f.sessions.getSession({ uid })).pendingApproval;
    const after = await f.sessions.cancel({ session: uid });
    await f.host.placer.effectsIdle();
    const lines = readFileSync(auditFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { session: string; event: string; seq: number; detail: Record<string, unknown> });
    expect(lines.map((l) => l.event)).toEqual(["turn.parked", "wait.withdrawn"]);
    expect(lines[1]).toMatchObject({
      session: uid,
      seq: Number(after.lastSeq),
      detail: {
        execution_id: gate?.executionId,
        tool_call_id: gate?.toolCallId,
        request_seq: Number(gate?.requestSeq),
      },
    });
    rmSync(dirname(auditFile), { recursive: true, force: true });
  });

  it("resumeAfterAWithdrawnWaitReDrivesTheTurnWithItsCallDenied", async () => {
    const f = await fixture();
    const uid = await parkedAskSession(f);
    await f.sessions.cancel({ session: uid });
    const resumed = await f.sessions.resume({ session: uid });
    expect(resumed.execState).toBe(ExecState.EXEC_COMPLETED);
    expect(outputs(await recordsOf(f, uid))).toEqual(["receipt: denied"]);
    // The withdrawn decision cannot be changed afterwards.
    expect(await f.host.journal.verify(uid)).toMatchObject({ ok: true });
  });

  it("withdrawnMemoryTurnLeavesNoChange: askcounter's next turn counts from the state before the withdrawn one", async () => {
    const f = await fixture();
    const { items } = await drain(f.sessions.exec({ harness: "askcounter", inputs: [userInput("a")] }));
    const uid = items[0]?.update.case === "session" ? (items[0].update.value.metadata?.uid ?? "") : "";
    expect((await f.sessions.getSession({ uid })).pendingApproval).toBeDefined();
    expect((await f.sessions.cancel({ session: uid })).execState).toBe(ExecState.EXEC_CANCELED);
    expect((await drain(f.sessions.exec({ session: uid, inputs: [userInput("b")] }))).error).toBeUndefined();
    const gate = (await f.sessions.getSession({ uid })).pendingApproval;
    expect(gate).toBeDefined();
    await f.sessions.approve({
      session: uid,
      executionId: gate?.executionId ?? "",
      toolCallId: gate?.toolCallId ?? "",
      requestSeq: gate?.requestSeq ?? 0n,
      approved: true,
    });
    await f.sessions.resume({ session: uid });
    expect(outputs(await recordsOf(f, uid))).toEqual(["1 approved"]);
    expect(await f.host.journal.verify(uid)).toMatchObject({ ok: true });
  });
});

describe("DeleteSession", () => {
  it("deletedSessionAnswersNotFound; its fork child keeps verifying and running", async () => {
    const f = await fixture();
    const { items } = await drain(f.sessions.exec({ inputs: [userInput("one")] }));
    const uid = items[0]?.update.case === "session" ? (items[0].update.value.metadata?.uid ?? "") : "";
    const [child] = (await f.sessions.fork({ session: uid, count: 1 })).children;
    const childUid = child?.metadata?.uid ?? "";
    const deleted = await f.sessions.deleteSession({ uid });
    expect(deleted.metadata?.uid).toBe(uid);
    expect(await codeOf(f.sessions.getSession({ uid }))).toBe(GrpcStatus.NOT_FOUND);
    expect((await drain(f.sessions.replay({ session: uid }))).error?.grpcCode).toBe(GrpcStatus.NOT_FOUND);
    expect((await drain(f.sessions.exec({ session: uid, inputs: [userInput("x")] }))).error?.grpcCode).toBe(
      GrpcStatus.NOT_FOUND,
    );
    expect(await codeOf(f.sessions.deleteSession({ uid }))).toBe(GrpcStatus.NOT_FOUND);
    expect(await codeOf(f.sessions.cancel({ session: uid }))).toBe(GrpcStatus.NOT_FOUND);
    expect((await f.sessions.listSessions({})).sessions.map((s) => s.metadata?.uid)).toEqual([childUid]);
    expect(await f.host.journal.readRange(uid)).toEqual([]);
    // The child holds its own copy of the inherited records: it verifies, and takes a new turn.
    expect(await f.host.journal.verify(childUid)).toMatchObject({ ok: true });
    expect((await drain(f.sessions.exec({ session: childUid, inputs: [userInput("two")] }))).error).toBeUndefined();
    expect(outputs(await recordsOf(f, childUid))).toEqual(["echo:one", "echo:two"]);
    expect(await f.host.journal.verify(childUid)).toMatchObject({ ok: true });
  });

  it("deleteOfASessionWithARunningTurnIsRefusedAndChangesNothing", async () => {
    const gate = gatedEchoModel();
    const f = await fixture({ overrides: { model: gate.model } });
    const uid = (await f.sessions.createSession({})).metadata?.uid ?? "";
    const turn = drain(f.sessions.exec({ session: uid, inputs: [userInput("busy")] }));
    await gate.entered;
    expect(await codeOf(f.sessions.deleteSession({ uid }))).toBe(GrpcStatus.ABORTED);
    gate.release();
    expect((await turn).error).toBeUndefined();
    expect(outputs(await recordsOf(f, uid))).toEqual(["echo:busy"]);
    expect(await codeOf(f.sessions.deleteSession({ uid: "" }))).toBe(GrpcStatus.INVALID_ARGUMENT);
    await f.sessions.deleteSession({ uid });
    expect(await codeOf(f.sessions.getSession({ uid }))).toBe(GrpcStatus.NOT_FOUND);
  });

  it("deletedMemorySessionLeavesItsBlobsUnreferenced: the child's checkpoint stays referenced", async () => {
    const f = await fixture();
    const { items } = await drain(f.sessions.exec({ harness: "counter", inputs: [userInput("a")] }));
    const uid = items[0]?.update.case === "session" ? (items[0].update.value.metadata?.uid ?? "") : "";
    const [child] = (await f.sessions.fork({ session: uid, count: 1 })).children;
    const childUid = child?.metadata?.uid ?? "";
    await drain(f.sessions.exec({ session: uid, inputs: [userInput("b")] }));
    const parentDigest = (await f.host.journal.latestCheckpoint(uid))?.digest ?? "";
    const childDigest = (await f.host.journal.latestCheckpoint(childUid))?.digest ?? "";
    expect(parentDigest).toMatch(/^sha256:/);
    expect(childDigest).toMatch(/^sha256:/);
    expect(parentDigest).not.toBe(childDigest);
    await f.sessions.deleteSession({ uid });
    const referenced = await f.host.journal.checkpointDigests();
    expect(referenced).toContain(childDigest);
    expect(referenced).not.toContain(parentDigest);
    // Snapshot GC (no grace period) now collects the parent's blob and keeps the child's.
    const gc = await collectSnapshotGarbage(f.host.journal, f.host.snapshots, { graceMs: 0 });
    expect(gc.deleted).toContain(parentDigest);
    expect(gc.deleted).not.toContain(childDigest);
    const next = await drain(f.sessions.exec({ session: childUid, inputs: [userInput("c")] }));
    expect(next.error).toBeUndefined();
    expect(await f.host.journal.verify(childUid)).toMatchObject({ ok: true });
  });
});
