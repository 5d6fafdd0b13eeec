// suspend_resume_ratio, suspend_resume_p50_ms and snapshot_codec_ratio for the counter memory actor.
// suspend_resume_p50_ms: one Placer.suspend + Placer.resume of a live counter session on the spawned
// runtime with a warm node, end to end (SUSPEND/RESUME records, blob store, restore in the node). The
// built-in counter checkpoints every turn, so its suspend names the blob the turn just stored; the same
// cycle with `checkpointPolicy: on-suspend` (suspend must snapshot the actor over gRPC) is reported in
// `details.onSuspend*`. suspend_resume_ratio: that end-to-end p50 over raw v8.serialize + deserialize
// of the same state (docs/performance.md's definition) — it includes durable commits and IPC the baseline does
// not, and `details` breaks the cycle down (journal, blob store, the rest) beside the disk's measured
// price of one durable commit. snapshot_codec_ratio: the host's actor codec (encodeActor +
// decodeActor) alone over the same raw v8 baseline. Invariant: after every resume the next turn must
// continue the count (a cold boot or double apply is a crash, not a number).
import { deserialize, serialize } from "node:v8";
import { CounterAgent } from "../../harnesses/counteragent/index.js";
import { textMessage } from "../../src/controller/events.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { guardImport, lazyImport, Unavailable } from "../lib/lazy.js";
import { median, percentile, round, sampleOf } from "../lib/stats.js";
import { rawCommitMs } from "../lib/raw-commit.js";
import { scratchDir } from "../lib/tmp.js";
import { newTally, timed } from "../lib/timed.js";
import { DURABLE_JOURNAL_METHODS } from "../../src/journal/types.js";
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

interface EndToEnd {
  readonly ms: number[];
  readonly details: Record<string, number | string>;
}

/** Suspend + resume cycles of a live counter session, end to end through a Host on the spawned runtime. */
async function endToEnd(quick: boolean, policy: "every-turn" | "on-suspend"): Promise<EndToEnd | Unmeasured> {
  try {
    await lazyImport(new URL("../../src/runtime/table.js", import.meta.url), "spawned runtime (src/runtime/table.ts)");
  } catch (err) {
    if (err instanceof Unavailable) return { unavailable: err.message };
    throw err;
  }
  const [{ Host }, { openJournal }, { FsSnapshotStore }] = await Promise.all([
    guardImport(() => import("../../src/host/index.js"), "src/host"),
    import("../../src/journal/index.js"),
    import("../../src/snapshot/store.js"),
  ]);
  const dir = scratchDir("suspend");
  // The journal and blob store the host would open itself, observed by timing proxies for the breakdown.
  const journalTally = newTally();
  const storeTally = newTally();
  const journal = timed(await openJournal(dir.file("journal.db")), journalTally);
  const snapshots = timed(new FsSnapshotStore(dir.file("snapshots")), storeTally);
  const harness = policy === "every-turn" ? "counter" : "ocounter";
  const extra =
    policy === "every-turn"
      ? {}
      : { harnesses: [{ name: harness, runtime: "spawned" as const, target: "counter", checkpointPolicy: policy }] };
  const host = await Host.open({ dataDir: dir.path, nodeIdleMs: 60_000, ...extra }, { journal, snapshots });
  const signal = new AbortController().signal;
  try {
    if (!host.registry.get(harness))
      return { unavailable: `the host serves no \`${harness}\` harness (spawned runtime not registered)` };
    const session = (await host.createSession({ harness })).uid;
    let expected = 0;
    const turn = async () => {
      expected++;
      const r = await host.placer.exec({ session, inputs: [textMessage("user", "tick")], signal });
      if (r.outputs[0] !== String(expected))
        throw new Error(`counter answered ${JSON.stringify(r.outputs[0])}, expected ${expected}`);
    };
    try {
      await turn();
    } catch (err) {
      // No node process could be started at all: the spawned runtime's prerequisites (e.g. the
      // `harnesshost node` command) are not in this tree yet. Anything failing later is a crash.
      if (isHostError(err, ErrorCode.Unavailable))
        return { unavailable: `spawned runtime cannot start a node: ${err.message}` };
      throw err;
    }
    const warmup = 3;
    const n = quick ? 3 : 60;
    const ms: number[] = [];
    const journalMs: number[] = [];
    const storeMs: number[] = [];
    let commits = 0;
    for (let i = 0; i < warmup + n; i++) {
      journalTally.reset();
      storeTally.reset();
      const t0 = performance.now();
      await host.placer.suspend(session, signal);
      await host.placer.resume(session, signal);
      const elapsed = performance.now() - t0;
      if (i >= warmup) {
        ms.push(elapsed);
        journalMs.push(journalTally.ms());
        storeMs.push(storeTally.ms());
        commits = journalTally.calls(...DURABLE_JOURNAL_METHODS);
      }
      await turn();
    }
    const commitMs = rawCommitMs(dir.file("raw-commit.db"), quick ? 10 : 50);
    const p50 = median(ms);
    return {
      ms,
      details: {
        journalMs: round(median(journalMs)),
        journalWritesPerCycle: commits,
        journalReadsPerCycle: journalTally.calls(...JOURNAL_READS),
        rawCommitMs: round(commitMs),
        blobStoreMs: round(median(storeMs)),
        otherMs: round(p50 - median(journalMs) - median(storeMs)),
        cycles: n,
      },
    };
  } finally {
    await host.close();
    dir.dispose();
  }
}

/** Journal methods that only read. */
const JOURNAL_READS = ["readRange", "read", "getSession", "head", "verify", "latestCheckpoint", "currentFence"];

export const suspendResume: Figure = {
  key: "suspend_resume_ratio",
  extraKeys: ["suspend_resume_p50_ms", "snapshot_codec_ratio"],
  title: "counter suspend + resume, end to end on the spawned runtime, vs raw v8 serialize + deserialize",
  async run(opts: RunOptions): Promise<FigureResult> {
    const codec = await codecRatio(opts.quick);
    const rawUs = codec.baseline?.median ?? Number.NaN;
    const e2e = await endToEnd(opts.quick, "every-turn");
    if ("unavailable" in e2e) return { status: "unavailable", reason: e2e.unavailable };
    const onSuspend = await endToEnd(opts.quick, "on-suspend");
    if ("unavailable" in onSuspend) return { status: "unavailable", reason: onSuspend.unavailable };
    const details = {
      ...e2e.details,
      checkpointPolicy: "every-turn",
      onSuspendP50Ms: round(median(onSuspend.ms)),
      onSuspendP99Ms: round(percentile(onSuspend.ms, 99)),
      onSuspendJournalMs: onSuspend.details.journalMs ?? "",
      onSuspendBlobStoreMs: onSuspend.details.blobStoreMs ?? "",
      onSuspendOtherMs: onSuspend.details.otherMs ?? "",
    };
    const p50 = median(e2e.ms);
    const ratio = (p50 * 1000) / rawUs;
    return {
      status: "ok",
      value: round(ratio),
      unit: "×",
      measured: { ...sampleOf(e2e.ms.map(round), "ms"), p99: round(percentile(e2e.ms, 99)) },
      ...(codec.baseline ? { baseline: codec.baseline } : {}),
      ratio: round(ratio),
      target: { op: "<=", value: 3 },
      details,
      also: {
        suspend_resume_p50_ms: {
          value: round(p50),
          unit: "ms",
          measured: { ...sampleOf(e2e.ms.map(round), "ms"), p99: round(percentile(e2e.ms, 99)) },
          target: { op: "<=", value: 10 },
          details,
        },
        snapshot_codec_ratio: codec,
      },
    };
  },
};
