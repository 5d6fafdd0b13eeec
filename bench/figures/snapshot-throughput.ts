// snapshot_throughput_ratio: encodeActor of a ~10 MB actor state (strings, typed arrays, a Map with
// shared references) in MB/s, against raw v8.serialize of the very same object graph. Invariant: the
// codec's bytes must decode back (decodeActor) to the same shape, or the figure crashes.
import { deserialize, serialize } from "node:v8";
import { BenchActor, bigActor } from "../lib/actor-state.js";
import { guardImport } from "../lib/lazy.js";
import { median, paired, round, sampleOf } from "../lib/stats.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

const MB = 1024 * 1024;

export const snapshotThroughput: Figure = {
  key: "snapshot_throughput_ratio",
  title: "snapshot of a 10 MB actor state vs raw v8.serialize",
  async run(opts: RunOptions): Promise<FigureResult> {
    const codec = await guardImport(() => import("../../src/snapshot/codec.js"), "actor codec (src/snapshot/codec.ts)");
    const size = opts.quick ? 1 * MB : 10 * MB;
    const reps = opts.quick ? 2 : 7;
    const actor = bigActor(size);
    const encodedBytes = codec.encodeActor(actor).length;
    const rawBytes = serialize(actor).length;
    const encodeRuns = await paired(
      reps,
      1,
      async () => {
        const t0 = performance.now();
        const bytes = codec.encodeActor(actor);
        return bytes.length / MB / ((performance.now() - t0) / 1000);
      },
      async () => {
        const t0 = performance.now();
        const bytes = serialize(actor);
        return bytes.length / MB / ((performance.now() - t0) / 1000);
      },
    );
    const encoded = codec.encodeActor(actor);
    const raw = serialize(actor);
    const decodeRuns = await paired(
      reps,
      1,
      async () => {
        const t0 = performance.now();
        const restored = codec.decodeActor(encoded, new BenchActor());
        const s = encoded.length / MB / ((performance.now() - t0) / 1000);
        if (!(restored instanceof BenchActor) || restored.transcript.length !== actor.transcript.length)
          throw new Error("decodeActor lost state");
        return s;
      },
      async () => {
        const t0 = performance.now();
        deserialize(raw);
        return raw.length / MB / ((performance.now() - t0) / 1000);
      },
    );
    const ratio = median(encodeRuns.ratios);
    return {
      status: "ok",
      value: round(ratio),
      unit: "×",
      measured: sampleOf(encodeRuns.subject.map(round), "MB/s"),
      baseline: { ...sampleOf(encodeRuns.baseline.map(round), "MB/s"), what: "v8.serialize of the same object graph" },
      ratio: round(ratio),
      target: { op: ">=", value: 0.5 },
      details: {
        stateMB: round(rawBytes / MB),
        encodedMB: round(encodedBytes / MB),
        restoreMBps: round(median(decodeRuns.subject)),
        rawDeserializeMBps: round(median(decodeRuns.baseline)),
        restoreRatio: round(median(decodeRuns.ratios)),
        reps,
      },
    };
  },
};
