// suspend_resume_p50_ms and suspend_resume_ratio for the counter memory actor. p50_ms: one
// Placer.suspend + Placer.resume of a live counter session on the spawned runtime, end to end
// (snapshot over gRPC, blob store, SUSPEND/RESUME records, restore in a node). ratio: the host's actor
// codec (encodeActor + decodeActor) on the counter's state over raw v8.serialize + deserialize of the
// same state — the serialization overhead the host adds. Invariant: after every resume the next turn
// must continue the count (a cold boot or double apply is a crash, not a number).
import { deserialize, serialize } from "node:v8";
import { CounterAgent } from "../../harnesses/counteragent/index.js";
import { textMessage } from "../../src/controller/events.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { guardImport, lazyImport, Unavailable } from "../lib/lazy.js";
import { median, percentile, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, Reading, RunOptions } from "../lib/types.js";

/** Per-iteration µs of `fn`, timed in batches so sub-microsecond work is measurable. */
function batchMicros(fn: () => void, batches: number, perBatch: number): number[] {
  const out: number[] = [];
  for (let b = 0; b < batches; b++) {
    const t0 = performance.now();
    for (let i = 0; i < perBatch; i++) fn();
    out.push(((performance.now() - t0) * 1000) / perBatch);
  }
  return out;
}

async function codecRatio(quick: boolean): Promise<Reading> {
  const codec = await guardImport(() => import("../../src/snapshot/codec.js"), "actor codec (src/snapshot/codec.ts)");
  const actor = new CounterAgent();
  actor.count = 42;
  const batches = quick ? 3 : 15;
  const perBatch = quick ? 200 : 2000;
  const codecUs: number[] = [];
  const rawUs: number[] = [];
  for (let i = 0; i < batches; i++) {
    codecUs.push(...batchMicros(() => codec.decodeActor(codec.encodeActor(actor), new CounterAgent()), 1, perBatch));
    rawUs.push(...batchMicros(() => deserialize(serialize(actor)), 1, perBatch));
  }
  const restored = codec.decodeActor(codec.encodeActor(actor), new CounterAgent());
  if (restored.count !== 42) throw new Error("counter state did not survive encodeActor/decodeActor");
  const ratio = median(codecUs) / median(rawUs);
  return {
    value: round(ratio),
    unit: "×",
    measured: sampleOf(codecUs.map(round), "µs"),
    baseline: { ...sampleOf(rawUs.map(round), "µs"), what: "v8.serialize + v8.deserialize of the same counter state" },
    ratio: round(ratio),
    target: { op: "<=", value: 3 },
    details: { compares: "encodeActor+decodeActor vs v8 serialize+deserialize", itersPerBatch: perBatch },
  };
}

type Unmeasured = { readonly unavailable: string };

/** p50 of suspend + resume of a live counter session, end to end through a Host on the spawned runtime. */
async function endToEnd(quick: boolean, rawUs: number): Promise<Reading | Unmeasured> {
  try {
    await lazyImport(new URL("../../src/runtime/builders.js", import.meta.url), "spawned runtime (src/runtime/builders.ts)");
  } catch (err) {
    if (err instanceof Unavailable) return { unavailable: err.message };
    throw err;
  }
  const { Host } = await guardImport(() => import("../../src/host/index.js"), "src/host");
  const dir = scratchDir("suspend");
  const host = await Host.open({ dataDir: dir.path, nodeIdleMs: 60_000 });
  const signal = new AbortController().signal;
  try {
    if (!host.registry.get("counter")) return { unavailable: "the host serves no `counter` harness (spawned runtime not registered)" };
    const session = (await host.createSession({ harness: "counter" })).uid;
    let expected = 0;
    const turn = async () => {
      expected++;
      const r = await host.placer.exec({ session, inputs: [textMessage("user", "tick")], signal });
      if (r.outputs[0] !== String(expected)) throw new Error(`counter answered ${JSON.stringify(r.outputs[0])}, expected ${expected}`);
    };
    try {
      await turn();
    } catch (err) {
      // No node process could be started at all: the spawned runtime's prerequisites (e.g. the
      // `harnesshost node` command) are not in this tree yet. Anything failing later is a crash.
      if (isHostError(err, ErrorCode.Unavailable)) return { unavailable: `spawned runtime cannot start a node: ${err.message}` };
      throw err;
    }
    const warmup = 2;
    const n = quick ? 3 : 30;
    const ms: number[] = [];
    for (let i = 0; i < warmup + n; i++) {
      const t0 = performance.now();
      await host.placer.suspend(session, signal);
      await host.placer.resume(session, signal);
      const elapsed = performance.now() - t0;
      if (i >= warmup) ms.push(elapsed);
      await turn();
    }
    const p50 = median(ms);
    return {
      value: round(p50),
      unit: "ms",
      measured: { ...sampleOf(ms.map(round), "ms"), p99: round(percentile(ms, 99)) },
      target: { op: "<=", value: 10 },
      details: { cycles: n, endToEndOverRawV8: round((p50 * 1000) / rawUs) },
    };
  } finally {
    await host.close();
    dir.dispose();
  }
}

export const suspendResume: Figure = {
  key: "suspend_resume_ratio",
  extraKeys: ["suspend_resume_p50_ms"],
  title: "counter suspend + resume (codec overhead; end to end on the spawned runtime)",
  async run(opts: RunOptions): Promise<FigureResult> {
    const ratio = await codecRatio(opts.quick);
    const e2e = await endToEnd(opts.quick, ratio.baseline?.median ?? Number.NaN);
    return { status: "ok", ...ratio, also: { suspend_resume_p50_ms: e2e } };
  },
};
