// obs_overhead: what observability costs on the two hot paths the issue names, each against the same
// code with it off, measured in one run. Turn: an echo turn over gRPC (in-process serve, spawned echo
// node over a unix socket, as turn_latency_ratio) on a host with metrics on and tracing off, and on the
// same host with tracing on into an in-memory exporter (through the batching span processor a serving
// host's OTLP export uses), against a host opened with metrics off
// (HostOverrides.metrics = false: no decorators, nothing counted) — alternating turn by turn. Append:
// SqliteJournal.append through the metrics decorator (tracing off, then on — each repetition inside a
// recording span, so every append records its commit span) against the bare journal, alternating
// repetitions. Invariant: the baseline and the subject run the same code path except for
// observability, in the same process, interleaved, so drift on a shared machine hits both alike.
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import type { Host } from "../../src/host/host.js";
import { instrumentJournal } from "../../src/host/instrument.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { messageText, textMessage } from "../../src/model/text.js";
import { HostMetrics } from "../../src/obs/metrics.js";
import { flushTracing, pauseTracing, startTracing, stopTracing } from "../../src/obs/trace.js";
import { createClient } from "../../src/wire/index.js";
import { echoEventStream, promptText } from "../lib/echo-turns.js";
import { median, round, sampleOf } from "../lib/stats.js";
import { scratchDir, type ScratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, Reading, RunOptions } from "../lib/types.js";
import { created } from "../../test/journal/sessions.js";

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };
const HARNESS = "necho";

interface Served {
  turn(i: number): Promise<number>;
  close(): Promise<void>;
}

/** Who the served echo turns run as: a token file and its token, a harness, a project (authz-overhead.ts). */
export interface ServedAs {
  readonly tokenFile?: string;
  readonly token?: string;
  readonly harness?: string;
  readonly project?: string;
}

/** An echo session served over gRPC on a unix socket, and one timed turn of it. */
export async function served(host: Host, dir: ScratchDir, name: string, as: ServedAs = {}): Promise<Served> {
  const { startServer } = await import("../../src/server/index.js");
  const server = await startServer(host, {
    addr: `unix://${dir.file(`${name}.sock`)}`,
    registryAddr: "127.0.0.1:0",
    httpAddr: "off",
    logger: SILENT,
    ...(as.tokenFile !== undefined ? { tokenFile: as.tokenFile } : {}),
  });
  const client = createClient(
    Sessions,
    server.addr,
    as.token !== undefined ? { metadata: { authorization: `Bearer ${as.token}` } } : {},
  );
  const created = await client.createSession({
    session: {
      harness: as.harness ?? HARNESS,
      ...(as.project !== undefined ? { metadata: { project: as.project } } : {}),
    },
  });
  const session = created.metadata?.uid ?? "";
  return {
    async turn(i) {
      const text = promptText(i);
      const t0 = performance.now();
      let answer: string | undefined;
      for await (const update of client.exec({ session, inputs: [textMessage("user", text)] })) {
        const event = update.update.case === "record" ? update.update.value.event : undefined;
        if (event?.kind === EventKind.EVENT_OUTPUT && event.body.case === "message")
          answer = messageText(event.body.value);
      }
      const ms = performance.now() - t0;
      if (answer !== `echo:${text}`) throw new Error(`turn ${i}: answer ${JSON.stringify(answer)}`);
      return ms;
    },
    async close() {
      client.close();
      await server.close(1000);
    },
  };
}

function reading(
  subject: number[],
  baseline: number[],
  unit: string,
  what: string,
  target: number,
  higherIsBetter: boolean,
): Reading {
  // A ratio of cost: subject time over baseline time (for rates, baseline rate over subject rate).
  const ratio = higherIsBetter ? median(baseline) / median(subject) : median(subject) / median(baseline);
  return {
    value: round(ratio),
    unit: "×",
    measured: sampleOf(subject.map(round), unit),
    baseline: { ...sampleOf(baseline.map(round), unit), what },
    ratio: round(ratio),
    target: { op: "<=", value: target },
  };
}

async function appendRates(
  journal: Pick<SqliteJournal, "append" | "newFence" | "getSession" | "createSession">,
  prefix: string,
  rep: number,
  n: number,
): Promise<number> {
  const events = echoEventStream(n);
  const session = `sess-${prefix}-${rep}`;
  await created(journal, session);
  await journal.newFence(session);
  const t0 = performance.now();
  for (let i = 0; i < events.length; i++) await journal.append(session, i, 1, events[i]!);
  return events.length / ((performance.now() - t0) / 1000);
}

/**
 * appendRates inside one recording span, as a turn's commits run inside its turn span: every append
 * then records its own `harnesshost.journal.commit` child span (a commit outside a recording trace
 * records none — src/obs/trace.ts recordChildSpan).
 */
function appendRatesInSpan(
  journal: Pick<SqliteJournal, "append" | "newFence" | "getSession" | "createSession">,
  prefix: string,
  rep: number,
  n: number,
): Promise<number> {
  return trace.getTracer("bench").startActiveSpan("bench.appends", async (span) => {
    try {
      return await appendRates(journal, prefix, rep, n);
    } finally {
      span.end();
    }
  });
}

export const obsOverhead: Figure = {
  key: "obs_metrics_turn_ratio",
  extraKeys: ["obs_tracing_turn_ratio", "obs_metrics_append_ratio", "obs_tracing_append_ratio"],
  title: "observability cost: echo turn and journal append with metrics on / tracing on vs off",
  async run(opts: RunOptions): Promise<FigureResult> {
    const { Host } = await import("../../src/host/index.js");
    const turns = opts.quick ? 4 : 60;
    const warmup = opts.quick ? 1 : 10;
    const reps = opts.quick ? 2 : 9;
    const perRep = opts.quick ? 40 : 200;
    const dir = scratchDir("obs");
    const open = (name: string, metrics: false | undefined) =>
      Host.open(
        {
          dataDir: dir.file(name),
          harnesses: [{ name: HARNESS, runtime: "spawned", target: "echo" }],
          defaultHarness: HARNESS,
          nodeIdleMs: 60_000,
        },
        metrics === false ? { metrics: false } : {},
      );
    const bare = await open("bare", false);
    const observed = await open("observed", undefined);
    const exporter = new InMemorySpanExporter();
    const rawJournal = SqliteJournal.open(dir.file("raw-append.db"));
    const obsJournal = instrumentJournal(SqliteJournal.open(dir.file("obs-append.db")), new HostMetrics());
    try {
      const a = await served(bare, dir, "bare");
      const b = await served(observed, dir, "observed");
      const off: number[] = [];
      const metricsOn: number[] = [];
      const baseTraced: number[] = [];
      const tracedOn: number[] = [];
      const rawRates: number[] = [];
      const obsRates: number[] = [];
      try {
        // Phase 1: tracing off (no SDK loaded): bare host vs metrics host.
        for (let i = 0; i < warmup + turns; i++) {
          const x = i % 2 === 0 ? await a.turn(i) : await b.turn(i);
          const y = i % 2 === 0 ? await b.turn(i) : await a.turn(i);
          if (i < warmup) continue;
          off.push(i % 2 === 0 ? x : y);
          metricsOn.push(i % 2 === 0 ? y : x);
        }
        // Appends, metrics on and tracing off, before the SDK is registered: once it is, its context
        // manager's async hooks tax every promise in the process, which is tracing's cost, not metrics'.
        for (let rep = 0; rep < reps + 1; rep++) {
          const x = await appendRates(rawJournal, "raw", rep, perRep);
          const y = await appendRates(obsJournal, "obs", rep, perRep);
          if (rep === 0) continue;
          rawRates.push(x);
          obsRates.push(y);
        }
        // Phase 2: the SDK registered, spans recorded (in memory) on the observed host's turns only.
        await startTracing({}, { exporter, batch: true });
        for (let i = 0; i < warmup + turns; i++) {
          pauseTracing(true);
          const x = await a.turn(i);
          pauseTracing(false);
          const y = await b.turn(i);
          await flushTracing();
          exporter.reset();
          if (i < warmup) continue;
          baseTraced.push(x);
          tracedOn.push(y);
        }
      } finally {
        await a.close();
        await b.close();
      }
      const rawRates2: number[] = [];
      const tracedRates: number[] = [];
      for (let rep = 0; rep < reps + 1; rep++) {
        pauseTracing(true);
        const x = await appendRates(rawJournal, "raw2", rep, perRep);
        pauseTracing(false);
        const y = await appendRatesInSpan(obsJournal, "traced", rep, perRep);
        await flushTracing();
        if (exporter.getFinishedSpans().length !== perRep + 1)
          throw new Error(`traced appends: ${exporter.getFinishedSpans().length} spans, expected ${perRep + 1}`);
        exporter.reset();
        if (rep === 0) continue;
        rawRates2.push(x);
        tracedRates.push(y);
      }
      const turnWhat = "echo turn over gRPC on a host opened with metrics off";
      const appendWhat = "bare SqliteJournal.append";
      return {
        status: "ok",
        ...reading(metricsOn, off, "ms", turnWhat, 1.05, false),
        also: {
          obs_tracing_turn_ratio: reading(
            tracedOn,
            baseTraced,
            "ms",
            `${turnWhat} (SDK registered, paused)`,
            1.2,
            false,
          ),
          obs_metrics_append_ratio: reading(obsRates, rawRates, "appends/s", appendWhat, 1.05, true),
          obs_tracing_append_ratio: reading(tracedRates, rawRates2, "appends/s", appendWhat, 1.2, true),
        },
      };
    } finally {
      await stopTracing();
      await rawJournal.close();
      await obsJournal.close();
      await bare.close();
      await observed.close();
      dir.dispose();
    }
  },
};
