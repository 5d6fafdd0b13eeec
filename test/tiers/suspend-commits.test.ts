// Suspend and resume of a memory actor in one durable commit each (docs/performance.md): the fence,
// SUSPEND and its checkpoint commit together only after the blob is stored; a suspend right after a
// checkpointed turn names that turn's blob; a resume with nothing to re-drive mints its fence with
// RESUME. Invariants: a SUSPEND never names a blob that is not stored (a failed blob write appends,
// mints and checkpoints nothing, and the actor stays live); suspend frees the actor; a session is
// never placed again before the previous actor's drop was answered.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Lifecycle_Kind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import type { Host } from "../../src/host/host.js";
import { openJournal } from "../../src/journal/index.js";
import { FsSnapshotStore, type StagedBlobFile } from "../../src/snapshot/store.js";
import { countingJournal, JOURNAL_WRITES } from "../fixtures/counting-journal.js";
import {
  closeAll,
  expectChainVerifies,
  headSeq,
  lifecycleOf,
  openTestHost,
  rejectsWithCode,
  signal,
  spawnedRuntimeOf,
  turn,
  turns,
  until,
} from "./helpers.js";

/**
 * A blob store whose writes can be made to fail (the disk refusing the blob), counting blob writes: puts
 * and the commits of files a spawned node wrote (stageFile).
 */
class FaultyStore extends FsSnapshotStore {
  failPuts = false;
  puts = 0;
  override async put(bytes: Uint8Array): Promise<string> {
    this.puts += 1;
    if (this.failPuts) throw new HostError(ErrorCode.Unavailable, "injected: blob write failed");
    return super.put(bytes);
  }
  override async stageFile(): Promise<StagedBlobFile> {
    const staged = await super.stageFile();
    return {
      ...staged,
      commit: (sha256: string, size: number) => {
        this.puts += 1;
        if (this.failPuts) return Promise.reject(new HostError(ErrorCode.Unavailable, "injected: blob write failed"));
        return staged.commit(sha256, size);
      },
    };
  }
}

let host: Host;
let store: FaultyStore;
let writes: () => number;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "hh-suspend-commits-"));
  store = new FaultyStore(join(dir, "snapshots"));
  const counted = countingJournal(await openJournal(join(dir, "journal.db")), JOURNAL_WRITES);
  writes = counted.calls;
  host = await openTestHost({ dataDir: dir, nodeIdleMs: 60_000 }, { journal: counted.journal, snapshots: store });
});
afterAll(closeAll);

describe("suspend and resume commits", () => {
  it("suspend and resume of a live counter each make one durable commit; the count carries on", async () => {
    const session = (await host.createSession({ harness: "counter" })).uid;
    expect(await turns(host, session, 2)).toEqual(["1", "2"]);
    const fence = await host.journal.currentFence(session);

    let before = writes();
    const { record: suspend } = await host.placer.suspend(session, signal());
    expect(writes() - before).toBe(1);
    expect(suspend.fence).toBe(fence + 1);
    expect(await host.journal.latestCheckpoint(session)).toMatchObject({
      seq: suspend.seq,
      contentHash: suspend.contentHash,
    });

    before = writes();
    const resumed = await host.placer.resume(session, signal());
    expect(writes() - before).toBe(1);
    expect(lifecycleOf(resumed.record, Lifecycle_Kind.LIFECYCLE_RESUME)).toBeDefined();
    expect(resumed.record.fence).toBe(fence + 2);
    expect(await host.journal.currentFence(session)).toBe(fence + 2);

    expect(await turn(host, session)).toEqual(["3"]);
    await expectChainVerifies(host, session);
  });

  it("a suspend right after a checkpointed turn names that turn's blob instead of snapshotting again", async () => {
    const session = (await host.createSession({ harness: "counter" })).uid;
    expect(await turns(host, session, 3)).toEqual(["1", "2", "3"]);
    const checkpoint = await host.journal.latestCheckpoint(session);
    expect(checkpoint?.seq).toBe(await headSeq(host, session));
    const puts = store.puts;

    const { ref } = await host.placer.suspend(session, signal());
    expect(store.puts).toBe(puts);
    expect(ref.externalUri).toBe(checkpoint!.digest);
    expect(await host.snapshots.has(ref.externalUri)).toBe(true);

    // After a resume the head is RESUME, which no checkpoint binds: the next suspend snapshots.
    await host.placer.resume(session, signal());
    const second = await host.placer.suspend(session, signal());
    expect(store.puts).toBe(puts + 1);
    expect(second.ref.externalUri).toBe(checkpoint!.digest); // same RAM state, same content address

    await host.placer.resume(session, signal());
    expect(await turn(host, session)).toEqual(["4"]);
    await expectChainVerifies(host, session);
  });

  it("SUSPEND never names a blob that is not stored: a failed blob write appends, mints and checkpoints nothing; the actor stays live", async () => {
    const session = (await host.createSession({ harness: "counter" })).uid;
    expect(await turns(host, session, 2)).toEqual(["1", "2"]);
    store.failPuts = true;
    try {
      // The third turn's every-turn checkpoint fails too (the turn stands), so Suspend must snapshot.
      expect(await turn(host, session)).toEqual(["3"]);
      const head = await host.journal.head(session);
      const fence = await host.journal.currentFence(session);
      const checkpoint = await host.journal.latestCheckpoint(session);
      expect(checkpoint?.seq).toBeLessThan(head.seq);

      await rejectsWithCode(host.placer.suspend(session, signal()), ErrorCode.Unavailable);
      expect(await host.journal.head(session)).toEqual(head);
      expect(await host.journal.currentFence(session)).toBe(fence);
      expect(await host.journal.latestCheckpoint(session)).toEqual(checkpoint);
      expect((await host.getSession(session)).computeState).toBe("LIVE");
    } finally {
      store.failPuts = false;
    }
    // The actor was never dropped: its RAM carries on.
    expect(await turn(host, session)).toEqual(["4"]);
    const { ref } = await host.placer.suspend(session, signal());
    expect(await host.snapshots.has(ref.externalUri)).toBe(true);
    await host.placer.resume(session, signal());
    expect(await turn(host, session)).toEqual(["5"]);
    await expectChainVerifies(host, session);
  });

  it("suspend frees the actor on the node, and a restore right after a stop is not undone by the late drop", async () => {
    const session = (await host.createSession({ harness: "counter" })).uid;
    expect(await turns(host, session, 2)).toEqual(["1", "2"]);
    const runtime = spawnedRuntimeOf(host, "counter");
    const node = runtime.currentNode!;
    expect((await node.actors.list()).map((a) => a.session)).toContain(session);

    await host.placer.suspend(session, signal());
    await until(
      "the node dropped the suspended actor",
      async () => !(await node.actors.list()).some((a) => a.session === session),
    );

    // Runtime level: stop resolves before the node answered its drop; the restore that follows waits for it.
    await host.placer.resume(session, signal());
    const ref = await runtime.snapshot(session, "EXTERNAL");
    await runtime.stop(session);
    const inc = await runtime.restore(ref, { sessionUid: session, harnessName: "counter" });
    expect(inc.origin).toBe("restored");
    expect((await node.actors.list()).map((a) => a.session)).toContain(session);
    expect(await turn(host, session)).toEqual(["3"]);
  });
  // docs/protocol.md §8.5: a restore does not wait for the drop of the instance it replaces.
  it("back-to-back suspend and resume never lose the restored actor to the previous instance's drop", async () => {
    const session = (await host.createSession({ harness: "counter" })).uid;
    expect(await turns(host, session, 1)).toEqual(["1"]);
    const node = spawnedRuntimeOf(host, "counter").currentNode!;
    for (let i = 2; i <= 12; i++) {
      await host.placer.suspend(session, signal());
      await host.placer.resume(session, signal());
      expect(await turn(host, session)).toEqual([String(i)]);
    }
    await until(
      "only the newest instance is left on the node",
      async () => (await node.actors.list()).filter((a) => a.session === session).length === 1,
    );
    await expectChainVerifies(host, session);
  });
});
