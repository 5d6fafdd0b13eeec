// The stateless tier (issue "Snapshot tiers", items 10 and 11): echo suspends to a filesystem-only ref,
// resumes and continues; a historical fork replays its copied prefix with zero model calls and leaves
// the parent untouched; concurrent turns on one session are refused (ABORTED), never queued.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Lifecycle_Kind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { textMessage } from "../../src/controller/index.js";
import { ErrorCode, grpcStatusOf, isHostError } from "../../src/errors/index.js";
import { status as GrpcStatus } from "@grpc/grpc-js";
import type { Host } from "../../src/host/host.js";
import {
  CountingModel,
  childMetas,
  closeAll,
  expectChainVerifies,
  lifecycleOf,
  openTestHost,
  records,
  signal,
  turn,
} from "./helpers.js";

let host: Host;
const model = new CountingModel();

beforeAll(async () => {
  host = await openTestHost({}, { model });
});
afterAll(closeAll);

describe("stateless tier: echo on the local runtime", () => {
  it("suspend records a filesystem-only ref (no memory, no external uri); resume and the next turn continue", async () => {
    const session = (await host.createSession({ harness: "echo" })).uid;
    expect(await turn(host, session, "one")).toEqual(["echo:one"]);
    const { record, ref } = await host.placer.suspend(session, signal());
    const suspend = lifecycleOf(record, Lifecycle_Kind.LIFECYCLE_SUSPEND);
    expect(suspend).toBeDefined();
    expect(suspend!.snapshotMemory).toBe(false);
    expect(suspend!.snapshotExternalUri).toBe("");
    expect(suspend!.snapshotLocal).toBe(session);
    expect(ref).toMatchObject({ memory: false, externalUri: "" });
    expect(await host.journal.latestCheckpoint(session)).toBeUndefined();
    expect((await host.getSession(session)).computeState).toBe("COLD");

    const resumed = await host.placer.resume(session, signal());
    expect(lifecycleOf(resumed.record, Lifecycle_Kind.LIFECYCLE_RESUME)).toBeDefined();
    expect(resumed.record.fence).toBeGreaterThan(record.fence);
    expect(await turn(host, session, "two")).toEqual(["echo:two"]);
    await expectChainVerifies(host, session);
  });

  it("fork at a historical seq: the child replays its prefix with zero model calls and the parent is untouched", async () => {
    const parent = (await host.createSession({ harness: "echo" })).uid;
    expect(await turn(host, parent, "a")).toEqual(["echo:a"]);
    const firstEnd = (await records(host, parent)).at(-1)!;
    expect(firstEnd.event.kind).toBe(EventKind.EVENT_END);
    expect(await turn(host, parent, "b")).toEqual(["echo:b"]);
    expect(await turn(host, parent, "c")).toEqual(["echo:c"]);
    const parentBefore = await records(host, parent);

    const [meta] = childMetas(1, "echo");
    const forked = await host.placer.fork({ parent, atSeq: firstEnd.seq, children: [meta!], signal: signal() });
    expect(forked.atSeq).toBe(firstEnd.seq);
    const child = meta!.uid;
    const childRecords = await records(host, child);
    expect(childRecords).toHaveLength(firstEnd.seq + 1);
    expect(childRecords.slice(0, firstEnd.seq).map((r) => r.contentHash)).toEqual(
      parentBefore.slice(0, firstEnd.seq).map((r) => r.contentHash),
    );
    const marker = lifecycleOf(childRecords.at(-1), Lifecycle_Kind.LIFECYCLE_FORK);
    expect(marker?.detail).toBe(`parent@${firstEnd.seq}`);

    const callsBefore = model.calls;
    const replay = await host.placer.replay(child, signal());
    expect(replay.outputs).toEqual(["echo:a"]);
    expect(model.calls - callsBefore).toBe(0);
    expect(await records(host, child)).toHaveLength(childRecords.length);

    // The parent: no checkpoint, no new record, same hashes, still serving turns.
    expect((await records(host, parent)).map((r) => r.contentHash)).toEqual(parentBefore.map((r) => r.contentHash));
    expect((await host.getSession(parent)).computeState).toBe("LIVE");
    await expectChainVerifies(host, parent);
    await expectChainVerifies(host, child);

    // The child continues live from its prefix; the parent likewise, independently.
    expect(await turn(host, child, "x")).toEqual(["echo:x"]);
    expect(model.calls - callsBefore).toBe(1);
    expect(await turn(host, parent, "d")).toEqual(["echo:d"]);
    expect((await host.placer.replay(child, signal())).outputs).toEqual(["echo:a", "echo:x"]);
    expect((await host.placer.replay(parent, signal())).outputs).toEqual(["echo:a", "echo:b", "echo:c", "echo:d"]);
    expect(model.calls - callsBefore).toBe(2);
    await expectChainVerifies(host, child);
  });

  it("10 concurrent Execs on one session: exactly one succeeds, the others are refused session_busy (ABORTED)", async () => {
    const session = (await host.createSession({ harness: "echo" })).uid;
    const attempts = Array.from({ length: 10 }, (_, i) =>
      host.placer.exec({ session, inputs: [textMessage("user", `c${i}`)], signal: signal() }),
    );
    const settled = await Promise.allSettled(attempts);
    const ok = settled.filter((s) => s.status === "fulfilled");
    const refused = settled.flatMap((s) => (s.status === "rejected" ? [s.reason as unknown] : []));
    expect(ok).toHaveLength(1);
    expect(refused).toHaveLength(9);
    for (const err of refused) {
      expect(isHostError(err, ErrorCode.SessionBusy), String(err)).toBe(true);
    }
    expect(grpcStatusOf(ErrorCode.SessionBusy)).toBe(GrpcStatus.ABORTED);
    // One turn's records only: EXECUTION_START, INPUT, MODEL_CALL, OUTPUT, END.
    const all = await records(host, session);
    expect(all.map((r) => r.event.kind)).toEqual([
      EventKind.EVENT_EXECUTION_START,
      EventKind.EVENT_INPUT,
      EventKind.EVENT_MODEL_CALL,
      EventKind.EVENT_OUTPUT,
      EventKind.EVENT_END,
    ]);
    await expectChainVerifies(host, session);
    // The guard was released: the next turn runs.
    expect(await turn(host, session, "after")).toEqual(["echo:after"]);
  });
});
