// The session-log projection's rules (docs/protocol.md §5.8) on hand-built journals: own vs inherited
// is decided by the session's own (last) FORK marker; gates carry owner and state from structured
// fields only; the restart point of a memory turn is a checkpoint taken between turns or at its start.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ev, SessionLog, textMessage } from "../../src/controller/index.js";
import {
  EventKind,
  Lifecycle_Kind,
  Mediation,
  ToolCallSchema,
  ToolResultSchema,
  type Event,
} from "../../src/gen/agentsessions/v1/common_pb.js";
import { hostEvent } from "../../src/controller/events.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import type { JournalRecord } from "../../src/journal/types.js";
import { created } from "../journal/sessions.js";

const P = "sess-00000000000000000000000p";
const C = "sess-00000000000000000000000c";
const G = "sess-00000000000000000000000g";

function gated(exec: string, id: string): Event {
  return ev.toolCall(
    exec,
    create(ToolCallSchema, {
      id,
      tool: "demo.write",
      mediation: Mediation.REQUIRES_APPROVAL,
      idempotencyKey: `${exec}/k`,
    }),
  );
}

function start(exec: string): Event[] {
  return [
    ev.executionStart(exec, {
      inputCount: 1,
      harness: "ask",
      harnessVersion: "1",
      config: new Uint8Array(),
      resumeFromSeq: 0,
    }),
    ev.input(exec, textMessage("user", "x")),
  ];
}

function decided(exec: string, toolCallId: string, requestSeq: number): Event {
  return hostEvent(EventKind.EVENT_APPROVAL_RESULT, exec, {
    case: "approvalResult",
    value: { toolCallId, approved: true, reason: "", requestSeq: BigInt(requestSeq) },
  });
}

async function append(j: MemoryJournal, s: string, events: Event[]): Promise<JournalRecord[]> {
  const head = await (await created(j, s)).head(s);
  return j.appendBatch(s, head.seq, await j.newFence(s), events);
}

const meta = (uid: string) => ({ uid, project: "default", harness: "ask" });

describe("SessionLog", () => {
  it("own vs inherited: the own fork point is the session's LAST fork marker (a grandchild carries its parent's first)", async () => {
    const j = new MemoryJournal();
    await append(j, P, [...start("e1"), ev.output("e1", textMessage("assistant", "a")), ev.end("e1")]);
    await j.fork(P, C, 4, { ...meta(C), parentUid: P, forkSeq: 4 });
    // C's own turn parks on a gate (TOOL_CALL + APPROVAL_REQUEST + park SUSPEND).
    const recs = await append(j, C, [...start("e2"), gated("e2", "w1"), ev.approvalRequest("e2", "w1", "ok?")]);
    await append(j, C, [
      ev.lifecycle(Lifecycle_Kind.LIFECYCLE_SUSPEND, { detail: "parked:whatever", snapshotLocal: C }),
    ]);
    const requestSeq = recs.at(-1)!.seq;
    const c = SessionLog.of(await j.readRange(C));
    expect(c.ownForkSeq).toBe(5);
    expect(c.pending()?.owner).toBe("own");
    expect(c.pendingApproval()?.ref).toEqual({ executionId: "e2", toolCallId: "w1", requestSeq });
    expect(c.parked).toBe(true);

    const cHead = (await j.head(C)).seq;
    await j.fork(C, G, cHead, { ...meta(G), parentUid: C, forkSeq: cHead });
    const g = SessionLog.of(await j.readRange(G));
    expect(g.ownForkSeq).toBe(cHead + 1);
    expect(g.pending()?.owner).toBe("inherited");
    const trailing = g.pending()?.trailing;
    expect(trailing?.kind === "gate" && trailing.gate).toMatchObject({ owner: "inherited", state: "open" });
    expect(g.pendingApproval()).toBeUndefined();
    expect(g.ownUnreceiptedGate()).toBeUndefined();
    expect(g.lastOwnSuspend).toBeUndefined();
    expect(g.computeState).toBe("COLD");
  });

  it("gates move open → decided → receipted on structured fields, whatever a SUSPEND detail says", async () => {
    const j = new MemoryJournal();
    const id = "line one:\nline two";
    const recs = await append(j, P, [...start("e1"), gated("e1", id), ev.approvalRequest("e1", id, "ok?")]);
    const requestSeq = recs.at(-1)!.seq;
    await append(j, P, [
      ev.lifecycle(Lifecycle_Kind.LIFECYCLE_SUSPEND, { detail: "not a park detail", snapshotLocal: P }),
    ]);
    const log = SessionLog.of(await j.readRange(P));
    const ref = { executionId: "e1", toolCallId: id, requestSeq };
    expect(log.gate(ref)?.state).toBe("open");
    expect(log.pendingApproval()?.ref).toEqual(ref);
    const [decision] = await append(j, P, [decided("e1", id, requestSeq)]);
    log.apply(decision!);
    expect(log.gate(ref)?.state).toBe("decided");
    expect(log.pendingApproval()).toBeUndefined();
    expect(log.ownUnreceiptedGate()?.ref).toEqual(ref);
    const [receipt] = await append(j, P, [ev.toolResult("e1", create(ToolResultSchema, { id }))]);
    log.apply(receipt!);
    expect(log.gate(ref)?.state).toBe("receipted");
    expect(log.ownUnreceiptedGate()).toBeUndefined();
    expect(log.gate({ ...ref, requestSeq: requestSeq + 1 })).toBeUndefined();
  });

  it("awaitedCall: the call a pending turn waits on — its trailing tool call or its gate's call", async () => {
    const j = new MemoryJournal();
    const plain = create(ToolCallSchema, { id: "c1", tool: "notes.add", idempotencyKey: "e1/c1" });
    await append(j, P, [...start("e1"), ev.toolCall("e1", plain)]);
    const log = SessionLog.of(await j.readRange(P));
    expect(log.awaitedCall()?.tool).toBe("notes.add");
    const [result] = await append(j, P, [ev.toolResult("e1", create(ToolResultSchema, { id: "c1" }))]);
    log.apply(result!);
    expect(log.awaitedCall()).toBeUndefined();
    for (const r of await append(j, P, [gated("e1", "c2"), ev.approvalRequest("e1", "c2", "ok?")])) log.apply(r);
    expect(log.awaitedCall()?.id).toBe("c2");
    for (const r of await append(j, P, [ev.end("e1")])) log.apply(r);
    expect(log.awaitedCall()).toBeUndefined();
  });

  it("restart point: a checkpoint bound to an END, SUSPEND or FORK with no other turn completed after it", async () => {
    const j = new MemoryJournal();
    const t1 = await append(j, P, [...start("e1"), ev.output("e1", textMessage("assistant", "1")), ev.end("e1")]);
    const end1 = t1.at(-1)!;
    await append(j, P, [...start("e2"), gated("e2", "w1"), ev.approvalRequest("e2", "w1", "ok?")]);
    const [park] = await append(j, P, [
      ev.lifecycle(Lifecycle_Kind.LIFECYCLE_SUSPEND, { snapshotLocal: P, snapshotMemory: true }),
    ]);
    const log = SessionLog.of(await j.readRange(P));
    const at = (r: JournalRecord) => ({ seq: r.seq, contentHash: r.contentHash });
    expect(log.restartPoint("e2", at(end1))).toEqual({ kind: "checkpoint", seq: end1.seq });
    expect(log.restartPoint("e2", at(park!))).toEqual({ kind: "checkpoint", seq: park!.seq });
    // A checkpoint whose bound record does not match, or bound to a record that is no END, SUSPEND or
    // FORK (an effect: the turn had run by then), is none; nor is "fresh" once another turn ran.
    expect(log.restartPoint("e2", { seq: park!.seq, contentHash: "sha256:other" }).kind).toBe("none");
    expect(log.restartPoint("e2", at(t1[2]!)).kind).toBe("none");
    // Once e2 completed, its park is no restart point for a later turn e3; e2's END is.
    const requestSeq = park!.seq - 1;
    const t2end = await append(j, P, [
      decided("e2", "w1", requestSeq),
      ev.toolResult("e2", create(ToolResultSchema, { id: "w1" })),
      ev.end("e2"),
    ]);
    const t3 = await append(j, P, [...start("e3")]);
    for (const r of [...t2end, ...t3]) log.apply(r);
    expect(log.restartPoint("e3", at(park!)).kind).toBe("none");
    expect(log.restartPoint("e3", at(end1)).kind).toBe("none");
    expect(log.restartPoint("e3", at(t2end.at(-1)!)).kind).toBe("checkpoint");
    // The first turn of a session restarts from a fresh actor.
    expect(SessionLog.of(t1.slice(0, 2)).restartPoint("e1", undefined)).toEqual({ kind: "fresh" });
  });

  it("a log that breaks the execution grammar still folds lifecycle facts; execution queries throw", async () => {
    const j = new MemoryJournal();
    await append(j, P, [ev.output("nope", textMessage("assistant", "x"))]);
    const log = SessionLog.of(await j.readRange(P));
    expect(log.head.seq).toBe(1);
    expect(() => log.pending()).toThrow(/does not begin with EXECUTION_START/);
    expect(log.pendingApproval()).toBeUndefined();
  });
});
