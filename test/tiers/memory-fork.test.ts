// Memory-tier fork through the spawned runtime (issue "Snapshot tiers", items 2 and 3): k children
// restore from one parent checkpoint (one shared blob) and continue independently; the parent stays
// resumable; a fork at a historical seq is refused with no side effects.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Lifecycle_Kind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ErrorCode, grpcStatusOf } from "../../src/errors/index.js";
import { status as GrpcStatus } from "@grpc/grpc-js";
import type { Host } from "../../src/host/host.js";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FsSnapshotStore, type PutOptions, type SnapshotStore } from "../../src/snapshot/store.js";
import {
  childMetas,
  closeAll,
  expectChainVerifies,
  lifecycleOf,
  openTestHost,
  records,
  rejectsWithCode,
  signal,
  turn,
  turns,
} from "./helpers.js";

let host: Host;
const BIG_STATE = fileURLToPath(new URL("../../harnesses/fixtures/big-state.ts", import.meta.url));

beforeAll(async () => {
  host = await openTestHost();
});
afterAll(closeAll);

describe("memory tier: fork from one checkpoint", () => {
  it("fork of 3 at the head of a counter at 4: each child answers 5 independently, one shared blob, the parent resumes at 5", async () => {
    const parent = (await host.createSession({ harness: "counter" })).uid;
    expect(await turns(host, parent, 4)).toEqual(["1", "2", "3", "4"]);
    const parentBefore = await records(host, parent);
    const atHead = parentBefore.length;
    const blobsBefore = (await host.snapshots.stats()).blobs;

    const metas = childMetas(3, "counter");
    const forked = await host.placer.fork({ parent, atSeq: 0, children: metas, signal: signal() });
    expect(forked.atSeq).toBe(atHead);
    expect(forked.children.map((c) => c.uid)).toEqual(metas.map((m) => m.uid));

    // Exactly one parent checkpoint: a SUSPEND after the fork point, carrying the blob's digest.
    const parentAfter = await records(host, parent);
    expect(parentAfter).toHaveLength(atHead + 1);
    const suspend = lifecycleOf(parentAfter.at(-1), Lifecycle_Kind.LIFECYCLE_SUSPEND);
    expect(suspend?.snapshotMemory).toBe(true);
    const digest = suspend!.snapshotExternalUri;
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await host.getSession(parent)).computeState).toBe("COLD");
    expect((await host.journal.latestCheckpoint(parent))?.digest).toBe(digest);

    // The blob is shared, not copied per child.
    expect((await host.snapshots.stats()).blobs - blobsBefore).toBeLessThanOrEqual(1);
    for (const m of metas) {
      expect((await host.journal.latestCheckpoint(m.uid))?.digest).toBe(digest);
      const childRecords = await records(host, m.uid);
      expect(childRecords.slice(0, atHead).map((r) => r.contentHash)).toEqual(parentBefore.map((r) => r.contentHash));
      expect(lifecycleOf(childRecords[atHead], Lifecycle_Kind.LIFECYCLE_FORK)?.detail).toBe(`parent@${atHead}`);
      await expectChainVerifies(host, m.uid);
    }

    const [c1, c2, c3] = metas.map((m) => m.uid) as [string, string, string];
    expect(await turn(host, c1)).toEqual(["5"]);
    expect(await turn(host, c1)).toEqual(["6"]);
    // Siblings do not share RAM: they still continue from the parent's 4.
    expect(await turn(host, c2)).toEqual(["5"]);
    expect(await turn(host, c3)).toEqual(["5"]);

    const resumed = await host.placer.resume(parent, signal());
    expect(lifecycleOf(resumed.record, Lifecycle_Kind.LIFECYCLE_RESUME)).toBeDefined();
    expect(await turn(host, parent)).toEqual(["5"]);

    for (const uid of [parent, c1, c2, c3]) await expectChainVerifies(host, uid);
  });

  it("fork of a counter at a historical seq (not its newest checkpoint) is refused unplaceable with no side effects", async () => {
    const parent = (await host.createSession({ harness: "counter" })).uid;
    expect(await turns(host, parent, 3)).toEqual(["1", "2", "3"]);
    const before = await records(host, parent);
    const firstEnd = before.find((r) => r.event.kind === EventKind.EVENT_END)!;
    const newest = await host.journal.latestCheckpoint(parent);
    expect(newest?.seq).toBe(before.length);
    expect(firstEnd.seq).toBeLessThan(newest!.seq);
    const fence = await host.journal.currentFence(parent);
    const sessionsBefore = (await host.journal.allSessionUids()).sort();

    const children = childMetas(2, "counter");
    const err = await rejectsWithCode(
      host.placer.fork({ parent, atSeq: firstEnd.seq, children, signal: signal() }),
      ErrorCode.Unplaceable,
    );
    expect(grpcStatusOf(ErrorCode.Unplaceable)).toBe(GrpcStatus.FAILED_PRECONDITION);
    expect(err.message).toContain(`not seq ${firstEnd.seq}`);

    expect((await records(host, parent)).map((r) => r.contentHash)).toEqual(before.map((r) => r.contentHash));
    expect(await host.journal.currentFence(parent)).toBe(fence);
    expect((await host.journal.latestCheckpoint(parent))?.seq).toBe(newest!.seq);
    for (const c of children) expect(await host.journal.getSession(c.uid)).toBeUndefined();
    expect((await host.journal.allSessionUids()).sort()).toEqual(sessionsBefore);

    // The parent is untouched and live.
    expect((await host.getSession(parent)).computeState).toBe("LIVE");
    expect(await turn(host, parent)).toEqual(["4"]);
    await expectChainVerifies(host, parent);
  });

  /**
   * Forks a session holding 8 MiB of state into 10 children on a host whose store counts its blob reads
   * (`files`: whether it offers blobs as local files); every child must hold the whole state.
   */
  async function bigFork(
    files: boolean,
  ): Promise<{ digest: string | undefined; reads: string[]; handed: string[]; puts: number; staged: number }> {
    const dir = mkdtempSync(join(tmpdir(), "hh-bigfork-"));
    const reads: string[] = [];
    const handed: string[] = [];
    let puts = 0;
    let staged = 0;
    const store = new FsSnapshotStore(join(dir, "snapshots"));
    const counted: SnapshotStore = Object.assign(Object.create(store) as FsSnapshotStore, {
      get: (digest: string) => {
        reads.push(digest);
        return store.get(digest);
      },
      put: (bytes: Uint8Array, opts?: PutOptions) => {
        puts += 1;
        return store.put(bytes, opts);
      },
      localFile: files
        ? (digest: string) => {
            handed.push(digest);
            return store.localFile(digest);
          }
        : undefined,
      stageFile: files
        ? () => {
            staged += 1;
            return store.stageFile();
          }
        : undefined,
    });
    const big = await openTestHost(
      {
        dataDir: dir,
        harnesses: [{ name: "big", runtime: "spawned", target: BIG_STATE, checkpointPolicy: "on-suspend" }],
      },
      { snapshots: counted },
    );
    const state = 8 * 1024 * 1024;
    const parent = (await big.createSession({ harness: "big" })).uid;
    expect(await turn(big, parent, `fill ${state}`)).toEqual(["1"]);
    const blobsBefore = (await big.snapshots.stats()).blobs;
    const metas = childMetas(10, "big");
    await big.placer.fork({ parent, atSeq: 0, children: metas, signal: signal() });
    expect((await big.snapshots.stats()).blobs - blobsBefore).toBe(1);
    const digest = (await big.journal.latestCheckpoint(parent))?.digest;
    for (const m of metas) expect((await big.journal.latestCheckpoint(m.uid))?.digest).toBe(digest);
    // Each child is a whole copy: it answers the state's size and continues the parent's count.
    expect(await turn(big, metas[0]!.uid, "size")).toEqual([String(state)]);
    expect(await turn(big, metas[9]!.uid)).toEqual(["2"]);
    return { digest, reads, handed, puts, staged };
  }

  it("fork of a large memory actor (8 MiB of state) into 10 children stores one blob and reads it once; every child holds the whole state", async () => {
    const { digest, reads, handed, puts, staged } = await bigFork(false);
    expect(reads).toEqual([digest]);
    expect(handed).toEqual([]);
    expect({ puts, staged }).toEqual({ puts: 1, staged: 0 });
  }, 120_000);

  it("aSpawnedSnapshotOrRestoreOfAStoredFileMovesNoBlobBytes: with blobs as local files the node writes the parent's blob and each child's node reads it; the host receives, reads and sends none", async () => {
    const { digest, reads, handed, puts, staged } = await bigFork(true);
    expect(reads).toEqual([]);
    expect(handed).toEqual(Array.from({ length: 10 }, () => digest));
    expect({ puts, staged }).toEqual({ puts: 0, staged: 1 });
  }, 120_000);
});
