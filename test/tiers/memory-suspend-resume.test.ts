// The memory tier through the spawned runtime (issue "Snapshot tiers", items 1 and 7): counter state
// survives suspend/resume as a content-addressed blob, the idle node process is freed, and a corrupt
// blob is refused with DATA_LOSS while the session stays suspended and resumable from good bytes.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Lifecycle_Kind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ErrorCode } from "../../src/errors/index.js";
import type { Host } from "../../src/host/host.js";
import {
  closeAll,
  expectChainVerifies,
  headSeq,
  lifecycleOf,
  openTestHost,
  pidExists,
  records,
  rejectsWithCode,
  signal,
  spawnedRuntimeOf,
  turn,
  turns,
  until,
} from "./helpers.js";

let host: Host;

beforeAll(async () => {
  host = await openTestHost({ nodeIdleMs: 0 });
});
afterAll(closeAll);

function blobPath(digest: string): string {
  const hex = digest.replace(/^sha256:/, "");
  return join(host.config.dataDir, "snapshots", "sha256", hex.slice(0, 2), hex);
}

describe("memory tier: suspend and resume through the spawned runtime", () => {
  it("counter continues at N+1 after suspend/resume, its blob is stored and the idle node process exits", async () => {
    const session = (await host.createSession({ harness: "counter" })).uid;
    expect(await turns(host, session, 3)).toEqual(["1", "2", "3"]);
    const beforeSuspend = await records(host, session);
    const preSuspendFence = beforeSuspend.at(-1)!.fence;

    const node = spawnedRuntimeOf(host, "counter").currentNode;
    expect(node, "a node process serves the counter").toBeDefined();
    const pid = node!.pid;
    expect(pidExists(pid)).toBe(true);

    const suspended = await host.placer.suspend(session, signal());
    const suspend = lifecycleOf(suspended.record, Lifecycle_Kind.LIFECYCLE_SUSPEND);
    expect(suspend).toBeDefined();
    expect(suspend!.snapshotMemory).toBe(true);
    expect(suspend!.snapshotExternalUri).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(suspend!.snapshotLocal).toBe(session);
    expect(await host.snapshots.has(suspend!.snapshotExternalUri)).toBe(true);
    expect(existsSync(blobPath(suspend!.snapshotExternalUri))).toBe(true);
    expect((await host.getSession(session)).computeState).toBe("COLD");

    // nodeIdleMs 0: the node held only this actor, so it exits once the actor is freed.
    await until(`node pid ${pid} is gone`, () => !pidExists(pid));

    const resumed = await host.placer.resume(session, signal());
    expect(resumed.turn).toBeUndefined();
    expect(lifecycleOf(resumed.record, Lifecycle_Kind.LIFECYCLE_RESUME)).toBeDefined();
    expect(resumed.record.fence).toBeGreaterThan(preSuspendFence);
    expect((await host.getSession(session)).computeState).toBe("LIVE");
    // The RAM came back into a different process than the one that ran turns 1..3.
    const restoredIn = spawnedRuntimeOf(host, "counter").currentNode;
    expect(restoredIn?.pid).toBeDefined();
    expect(restoredIn!.pid).not.toBe(pid);

    const next = await turn(host, session);
    // "1" would be a cold boot, "7" the journal replayed into the restored RAM (double-apply).
    expect(next).toEqual(["4"]);
    await expectChainVerifies(host, session);

    const all = await records(host, session);
    // The pre-suspend records are untouched and the lifecycle markers sit where they were written.
    expect(all.slice(0, beforeSuspend.length).map((r) => r.contentHash)).toEqual(
      beforeSuspend.map((r) => r.contentHash),
    );
    expect(lifecycleOf(all[beforeSuspend.length], Lifecycle_Kind.LIFECYCLE_SUSPEND)).toBeDefined();
    expect(lifecycleOf(all[beforeSuspend.length + 1], Lifecycle_Kind.LIFECYCLE_RESUME)).toBeDefined();
    expect(all.at(-1)!.fence).toBeGreaterThan(preSuspendFence);
  });

  it("a corrupt snapshot blob is refused with DATA_LOSS naming the digest; the session stays COLD until good bytes return", async () => {
    const session = (await host.createSession({ harness: "counter" })).uid;
    expect(await turns(host, session, 2)).toEqual(["1", "2"]);
    const { ref } = await host.placer.suspend(session, signal());
    const path = blobPath(ref.externalUri);
    const good = readFileSync(path);
    const head = await headSeq(host, session);

    writeFileSync(path, good.subarray(0, Math.floor(good.length / 2)));
    const err = await rejectsWithCode(host.placer.resume(session, signal()), ErrorCode.DataLoss);
    expect(err.message).toContain(ref.externalUri);
    expect(await headSeq(host, session)).toBe(head);
    expect((await host.getSession(session)).computeState).toBe("COLD");
    const last = (await records(host, session)).at(-1);
    expect(lifecycleOf(last, Lifecycle_Kind.LIFECYCLE_SUSPEND)).toBeDefined();

    // Same length, one flipped byte: still refused.
    const flipped = Buffer.from(good);
    flipped[flipped.length - 1] = flipped[flipped.length - 1]! ^ 0xff;
    writeFileSync(path, flipped);
    await rejectsWithCode(host.placer.resume(session, signal()), ErrorCode.DataLoss);
    expect(await headSeq(host, session)).toBe(head);

    writeFileSync(path, good);
    const resumed = await host.placer.resume(session, signal());
    expect(lifecycleOf(resumed.record, Lifecycle_Kind.LIFECYCLE_RESUME)).toBeDefined();
    expect(await turn(host, session)).toEqual(["3"]);
    await expectChainVerifies(host, session);
  });
});
