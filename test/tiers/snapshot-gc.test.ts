// Snapshot garbage collection (docs/protocol.md §9.7): superseded checkpoints go, while every blob a resume, a
// recovery or a fork child can name stays.
import { afterAll, describe, expect, it } from "vitest";
import { collectSnapshotGarbage, scheduleSnapshotGarbage } from "../../src/host/snapshot-gc.js";
import { closeAll, childMetas, openTestHost, signal, turn, turns, until } from "./helpers.js";

afterAll(closeAll);

describe("snapshot garbage collection", () => {
  it("keeps only each session's newest checkpoint blob; suspended parents and fork children still resume", async () => {
    const host = await openTestHost({ nodeIdleMs: 60_000 });
    const parent = await host.createSession({ harness: "counter" });
    expect(await turns(host, parent.uid, 3)).toEqual(["1", "2", "3"]);
    const before = (await host.snapshots.stats()).blobs;
    expect(before).toBeGreaterThanOrEqual(3); // one checkpoint per completed turn

    expect((await collectSnapshotGarbage(host.journal, host.snapshots)).deleted).toEqual([]); // all within the grace period
    const gc = await collectSnapshotGarbage(host.journal, host.snapshots, { graceMs: 0 });
    expect(gc.deleted.length).toBe(before - 1);
    const latest = await host.journal.latestCheckpoint(parent.uid);
    expect(await host.snapshots.list()).toEqual([latest?.digest]);

    const children = childMetas(2, "counter");
    await host.placer.fork({ parent: parent.uid, atSeq: 0, children, signal: signal() });
    await collectSnapshotGarbage(host.journal, host.snapshots, { graceMs: 0 });
    // The parent is suspended by the fork and both children were restored from the same blob.
    for (const child of children) expect(await turn(host, child.uid)).toEqual(["4"]);
    await host.placer.resume(parent.uid, signal());
    expect(await turn(host, parent.uid)).toEqual(["4"]);
  });
});

describe("scheduled snapshot garbage collection", () => {
  it("a scheduled run collects superseded checkpoints by itself and keeps the newest", async () => {
    const host = await openTestHost({ nodeIdleMs: 60_000 });
    const s = await host.createSession({ harness: "counter" });
    expect(await turns(host, s.uid, 2)).toEqual(["1", "2"]);
    const runs: number[] = [];
    const gc = scheduleSnapshotGarbage(host.journal, host.snapshots, {
      intervalMs: 20,
      graceMs: 0,
      onRun: (r) => runs.push(r.deleted.length),
    });
    try {
      const latest = (await host.journal.latestCheckpoint(s.uid))?.digest;
      // onRun reports a run after its deletions, so wait for the report (the blob list can shrink
      // before the run that shrank it has reported).
      await until("a scheduled run reports the superseded checkpoint collected", async () => runs.some((n) => n > 0));
      expect(await host.snapshots.list()).toEqual([latest]);
    } finally {
      gc.stop();
    }
    expect(await turns(host, s.uid, 1)).toEqual(["3"]);
  });
});
