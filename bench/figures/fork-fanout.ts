// fork_fanout_ratio and fork_blob_copies: Placer.fork of a live counter memory actor (spawned runtime,
// warm node) into 100 children vs into 1 child, each from a fresh parent with a few turns behind it.
// The counter is served with the on-suspend checkpoint policy, so the fork's own checkpoint is the only
// blob a fork writes: fork_blob_copies is the number of blobs the 100-child fork added to the store
// (docs/performance.md: stored once). Invariant: every child must reference the parent's one digest and continue
// the parent's count, or the figure crashes instead of reporting a number.
import { newSessionUid } from "../../src/controller/ids.js";
import type { Host } from "../../src/host/host.js";
import { textMessage } from "../../src/model/text.js";
import { guardImport } from "../lib/lazy.js";
import { median, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

/** Counter on the spawned runtime, checkpointed only when suspended or forked. */
const HARNESS = "counter-fork";
/** Turns of the first parent; each later parent runs one more, so no two parents' states (blobs) are equal. */
const PARENT_TURNS = 3;

interface ForkRun {
  readonly ms: number;
  readonly blobsAdded: number;
  readonly childDigests: number;
}

async function forkOnce(host: Host, children: number, parentTurns: number): Promise<ForkRun> {
  const signal = new AbortController().signal;
  const parent = (await host.createSession({ harness: HARNESS })).uid;
  for (let i = 1; i <= parentTurns; i++) {
    const r = await host.placer.exec({ session: parent, inputs: [textMessage("user", "tick")], signal });
    if (r.outputs[0] !== String(i))
      throw new Error(`parent counter answered ${JSON.stringify(r.outputs[0])}, expected ${i}`);
  }
  const metas = Array.from({ length: children }, () => ({
    uid: newSessionUid(),
    project: "default",
    harness: HARNESS,
  }));
  const blobsBefore = (await host.snapshots.stats()).blobs;
  const t0 = performance.now();
  const forked = await host.placer.fork({ parent, atSeq: 0, children: metas, signal });
  const ms = performance.now() - t0;
  const blobsAdded = (await host.snapshots.stats()).blobs - blobsBefore;
  if (forked.children.length !== children)
    throw new Error(`fork made ${forked.children.length} children, expected ${children}`);
  const digests = new Set<string>();
  for (const m of metas) {
    const digest = (await host.journal.latestCheckpoint(m.uid))?.digest;
    if (digest === undefined || !(await host.snapshots.has(digest)))
      throw new Error(`child ${m.uid} has no stored checkpoint`);
    digests.add(digest);
  }
  // A child continues the parent's RAM (not a cold start, not a sibling's state).
  const last = metas[metas.length - 1]!.uid;
  const r = await host.placer.exec({ session: last, inputs: [textMessage("user", "tick")], signal });
  if (r.outputs[0] !== String(parentTurns + 1))
    throw new Error(`forked child answered ${JSON.stringify(r.outputs[0])}, expected ${parentTurns + 1}`);
  // Free the children's actors so the node does not grow across repetitions.
  const runtime = host.registry.resolve(HARNESS).runtime;
  await Promise.all(metas.map((m) => runtime.stop(m.uid)));
  return { ms, blobsAdded, childDigests: digests.size };
}

export const forkFanout: Figure = {
  key: "fork_fanout_ratio",
  extraKeys: ["fork_blob_copies"],
  title: "fork of a counter memory actor into 100 children vs 1 (total time; blobs stored)",
  async run(opts: RunOptions): Promise<FigureResult> {
    const { Host } = await guardImport(() => import("../../src/host/index.js"), "src/host");
    const fanout = opts.quick ? 10 : 100;
    const reps = opts.quick ? 1 : 3;
    const dir = scratchDir("fork");
    const host = await Host.open({
      dataDir: dir.path,
      harnesses: [{ name: HARNESS, runtime: "spawned", target: "counter", checkpointPolicy: "on-suspend" }],
      nodeIdleMs: 60_000,
    });
    try {
      let parentTurns = PARENT_TURNS;
      await forkOnce(host, 1, parentTurns++); // warm-up: starts the node, compiles the paths
      const one: number[] = [];
      const many: number[] = [];
      let blobs = 0;
      let digests = 0;
      for (let i = 0; i < reps; i++) {
        const order = i % 2 === 0 ? [1, fanout] : [fanout, 1];
        for (const n of order) {
          const run = await forkOnce(host, n, parentTurns++);
          if (n === 1) one.push(run.ms);
          else {
            many.push(run.ms);
            blobs = Math.max(blobs, run.blobsAdded);
            digests = Math.max(digests, run.childDigests);
          }
        }
      }
      const ratio = median(many) / median(one);
      return {
        status: "ok",
        value: round(ratio),
        unit: "×",
        measured: sampleOf(many.map(round), "ms"),
        baseline: { ...sampleOf(one.map(round), "ms"), what: "Placer.fork of the same kind of parent into 1 child" },
        ratio: round(ratio),
        target: { op: "<=", value: 100 },
        details: { children: fanout, reps, perChildMs: round(median(many) / fanout), parentTurnsFrom: PARENT_TURNS },
        also: {
          fork_blob_copies: {
            value: blobs,
            unit: "blobs",
            target: { op: "<=", value: 1 },
            details: {
              children: fanout,
              distinctChildDigests: digests,
              measure: "snapshot-store blobs added by the fork",
            },
          },
        },
      };
    } finally {
      await host.close();
      dir.dispose();
    }
  },
};
