// The memory tier at size (issue 23 item 4), on the spawned runtime with a warm node and the big-state
// harness (harnesses/fixtures/big-state.ts, `checkpointPolicy: on-suspend`), each beside a raw baseline
// measured in the same run:
// - memory_restore_1mb_p50_ms: p50 of Placer.resume of a session whose actor holds ~1 MiB of state
//   (RESUME committed, RestoreActorWhole naming the blob's file, the node's read, sha256 check and
//   decode; docs/protocol.md §8.9), end to end; baseline: reading the same blob bytes from a file +
//   v8.deserialize.
// - memory_snapshot_100mb_mb_per_s: blob bytes / time of Placer.suspend of a session holding ~100 MiB
//   of state (SnapshotActor writing the blob into the store's staging place, fsynced by the node,
//   renamed and its directory fsynced by the host, SUSPEND committed; §8.11); baseline: v8.serialize of
//   an equal state in this process + writing it to a file + fsync.
// - memory_fork_100mb_ms and memory_fork_100mb_blobs: Placer.fork of that live session into 10
//   children (the parent's snapshot, one stored blob, 10 restores); blobs = what the fork added to the
//   store (target 1).
// --quick uses 256 KiB, 4 MiB and 3 children. Invariant: after every resume and in a fork child the
// counter continues and the state keeps its size, or the figure crashes instead of reporting a number.
import { closeSync, fsyncSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { deserialize, serialize } from "node:v8";
import type { Host } from "../../src/host/host.js";
import { textMessage } from "../../src/model/text.js";
import { bigActor } from "../lib/actor-state.js";
import { guardImport } from "../lib/lazy.js";
import { median, paired, percentile, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

const MiB = 1024 * 1024;
const HARNESS = "bigstate";
const TARGET = fileURLToPath(new URL("../../harnesses/fixtures/big-state.ts", import.meta.url));

/** One session of the big-state harness, with its expected count checked on every turn. */
class BigSession {
  private count = 0;
  private constructor(
    private readonly host: Host,
    readonly uid: string,
  ) {}

  static async filled(host: Host, bytes: number): Promise<BigSession> {
    const s = new BigSession(host, (await host.createSession({ harness: HARNESS })).uid);
    await s.turn(`fill ${bytes}`);
    return s;
  }

  async turn(text = "tick", uid = this.uid, expected = this.count + 1): Promise<void> {
    const r = await this.host.placer.exec({
      session: uid,
      inputs: [textMessage("user", text)],
      signal: new AbortController().signal,
    });
    if (r.outputs[0] !== String(expected))
      throw new Error(`session ${uid} answered ${JSON.stringify(r.outputs[0])}, expected ${expected}`);
    if (uid === this.uid) this.count = expected;
  }

  /** A turn in a fork child: it continues the parent's count. */
  childTurn(uid: string): Promise<void> {
    return this.turn("tick", uid, this.count + 1);
  }
}

/** MiB/s of writing `bytes` to a fresh file and fsyncing it. */
function rawSerializeWrite(state: object, file: string): { ms: number; bytes: number } {
  const t0 = performance.now();
  const bytes = serialize(state);
  const fd = openSync(file, "w");
  try {
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return { ms: performance.now() - t0, bytes: bytes.length };
}

async function run(opts: RunOptions): Promise<FigureResult> {
  const { Host } = await guardImport(() => import("../../src/host/index.js"), "src/host");
  const { newSessionUid } = await import("../../src/controller/ids.js");
  const small = opts.quick ? 256 * 1024 : 1 * MiB;
  const large = opts.quick ? 4 * MiB : 100 * MiB;
  const children = opts.quick ? 3 : 10;
  const dir = scratchDir("memtier");
  const host = await Host.open({
    dataDir: dir.path,
    nodeIdleMs: 60_000,
    limits: { snapshotBytes: 1024 * MiB, snapshotMs: 600_000 },
    harnesses: [{ name: HARNESS, runtime: "spawned", target: TARGET, checkpointPolicy: "on-suspend" }],
  });
  const signal = new AbortController().signal;
  try {
    // ── restore of a ~1 MiB state ───────────────────────────────────────────────────────────────
    const s1 = await BigSession.filled(host, small);
    const blobFile = dir.file("raw-blob.bin");
    let smallBlob = 0;
    const cycles = opts.quick ? 3 : 40;
    const restore = await paired(
      cycles,
      3,
      async () => {
        const { ref } = await host.placer.suspend(s1.uid, signal);
        if (smallBlob === 0) {
          const bytes = await host.snapshots.get(ref.externalUri);
          smallBlob = bytes.length;
          writeFileSync(blobFile, bytes);
        }
        const t0 = performance.now();
        await host.placer.resume(s1.uid, signal);
        const ms = performance.now() - t0;
        await s1.turn();
        return ms;
      },
      async () => {
        const t0 = performance.now();
        deserialize(readFileSync(blobFile));
        return performance.now() - t0;
      },
    );
    const restoreP50 = median(restore.subject);
    const rawRestoreP50 = median(restore.baseline);

    // ── snapshot of a ~100 MiB state ──────────────────────────────────────────────────────────────
    const s100 = await BigSession.filled(host, large);
    const rawState = bigActor(large);
    const snapMBps: number[] = [];
    const rawMBps: number[] = [];
    let largeBlob = 0;
    const reps = opts.quick ? 2 : 3;
    for (let i = 0; i < reps; i++) {
      const raw = rawSerializeWrite(rawState, dir.file("raw-state.bin"));
      rawMBps.push(raw.bytes / MiB / (raw.ms / 1000));
      await s100.turn(); // a new count: the snapshot is a new blob, stored for real
      const t0 = performance.now();
      const { ref } = await host.placer.suspend(s100.uid, signal);
      const ms = performance.now() - t0;
      largeBlob = (await host.snapshots.get(ref.externalUri)).length;
      snapMBps.push(largeBlob / MiB / (ms / 1000));
      await host.placer.resume(s100.uid, signal);
    }
    const snapMedian = median(snapMBps);
    const rawSnapMedian = median(rawMBps);

    // ── fork of the live ~100 MiB session into `children` ───────────────────────────────────────────
    await s100.turn();
    const metas = Array.from({ length: children }, () => ({
      uid: newSessionUid(),
      project: "default",
      harness: HARNESS,
    }));
    const blobsBefore = (await host.snapshots.stats()).blobs;
    const f0 = performance.now();
    await host.placer.fork({ parent: s100.uid, atSeq: 0, children: metas, signal });
    const forkMs = performance.now() - f0;
    const blobsAdded = (await host.snapshots.stats()).blobs - blobsBefore;
    const last = metas[metas.length - 1];
    if (last) await s100.childTurn(last.uid);
    const runtime = host.registry.resolve(HARNESS).runtime;
    await Promise.all(metas.map((m) => runtime.stop(m.uid)));

    const restoreRatio = restoreP50 / rawRestoreP50;
    return {
      status: "ok",
      value: round(restoreP50),
      unit: "ms",
      measured: { ...sampleOf(restore.subject.map(round), "ms"), p99: round(percentile(restore.subject, 99)) },
      baseline: {
        ...sampleOf(restore.baseline.map(round), "ms"),
        what: "readFileSync of the same blob + v8.deserialize",
      },
      ratio: round(restoreRatio),
      target: { op: "<=", value: 5 },
      details: {
        stateBytes: small,
        blobBytes: smallBlob,
        cycles,
        path: "Placer.resume, spawned node, fs store (the node reads the blob file)",
      },
      also: {
        memory_snapshot_100mb_mb_per_s: {
          value: round(snapMedian),
          unit: "MiB/s",
          measured: sampleOf(snapMBps.map(round), "MiB/s"),
          baseline: {
            ...sampleOf(rawMBps.map(round), "MiB/s"),
            what: "v8.serialize of an equal state + write + fsync, in process",
          },
          ratio: round(snapMedian / rawSnapMedian),
          target: { op: ">=", value: 500 },
          details: {
            stateBytes: large,
            blobBytes: largeBlob,
            reps,
            path: "Placer.suspend (on-suspend policy; the node writes the blob file)",
          },
        },
        memory_fork_100mb_ms: {
          value: round(forkMs),
          unit: "ms",
          details: {
            children,
            perChildMs: round(forkMs / children),
            stateBytes: large,
            blobBytes: largeBlob,
            measure: "Placer.fork of the live session: its snapshot, one stored blob, every child restored",
          },
        },
        memory_fork_100mb_blobs: {
          value: blobsAdded,
          unit: "blobs",
          target: { op: "<=", value: 1 },
          details: { children, measure: "snapshot-store blobs the fork added" },
        },
      },
    };
  } finally {
    await host.close();
    dir.dispose();
  }
}

export const memoryTier: Figure = {
  key: "memory_restore_1mb_p50_ms",
  extraKeys: ["memory_snapshot_100mb_mb_per_s", "memory_fork_100mb_ms", "memory_fork_100mb_blobs"],
  title: "memory tier at size: restore of 1 MiB, snapshot of 100 MiB, fork of 100 MiB into 10",
  timeoutMs: { quick: 120_000, full: 600_000 },
  run,
};
