// long_session_ratio: p50 of an echo turn through placement (Host → Placer → echo → SQLite) on a
// session with 10,000 prior events, over the p50 on a session with 10 prior events, measured where the
// harness runs in a host-spawned node process (the history crosses a process boundary, as with the
// reference's nodes) — that is the figure's value — and, in `details.local`, with the harness in
// process. Invariant: both sessions live in the same journal and their turns alternate, so only the
// session length differs.
import { echoEventStream, promptText } from "../lib/echo-turns.js";
import { openEchoHost, type EchoHost } from "../lib/echo-host.js";
import { median, percentile, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";
import { created } from "../../test/journal/sessions.js";

interface Run {
  readonly shortMs: number[];
  readonly longMs: number[];
}

async function measure(
  host: EchoHost,
  longEvents: number,
  shortEvents: number,
  warmup: number,
  turns: number,
): Promise<Run> {
  const seed = async (events: number): Promise<string> => {
    const uid = await host.newSession();
    await created(host.journal, uid);
    const fence = await host.journal.newFence(uid);
    await host.journal.appendBatch(uid, 0, fence, echoEventStream(events));
    return uid;
  };
  const short = await seed(shortEvents);
  const long = await seed(longEvents);
  const run: Run = { shortMs: [], longMs: [] };
  for (let i = 0; i < warmup + turns; i++) {
    // Alternate which session goes first so neither always follows the other's fsync.
    const order: [string, number[]][] =
      i % 2 === 0
        ? [
            [short, run.shortMs],
            [long, run.longMs],
          ]
        : [
            [long, run.longMs],
            [short, run.shortMs],
          ];
    for (const [session, into] of order) {
      const text = promptText(i);
      const t0 = performance.now();
      const result = await host.turn(session, text);
      const ms = performance.now() - t0;
      if (result.outputs[0] !== `echo:${text}`)
        throw new Error(`echo turn answered ${JSON.stringify(result.outputs[0])}`);
      if (i >= warmup) into.push(ms);
    }
  }
  return run;
}

const ratioOf = (run: Run): number => median(run.longMs) / median(run.shortMs);

export const longSession: Figure = {
  key: "long_session_ratio",
  title: "turn cost at 10,000 prior events vs at 10 (harness in a spawned node)",
  async run(opts: RunOptions): Promise<FigureResult> {
    const longEvents = opts.quick ? 500 : 10_000;
    const shortEvents = 10;
    const warmup = opts.quick ? 2 : 5;
    const turns = opts.quick ? 5 : 40;
    const runs: Partial<Record<"local" | "spawned", Run>> = {};
    for (const runtime of ["spawned", "local"] as const) {
      const dir = scratchDir(`long-${runtime}`);
      const host = await openEchoHost(dir.path, runtime);
      try {
        runs[runtime] = await measure(host, longEvents, shortEvents, warmup, turns);
      } finally {
        await host.close();
        dir.dispose();
      }
    }
    const spawned = runs.spawned!;
    const local = runs.local!;
    const ratio = ratioOf(spawned);
    return {
      status: "ok",
      value: round(ratio),
      unit: "×",
      measured: { ...sampleOf(spawned.longMs.map(round), "ms", true), p99: round(percentile(spawned.longMs, 99)) },
      baseline: {
        ...sampleOf(spawned.shortMs.map(round), "ms", true),
        p99: round(percentile(spawned.shortMs, 99)),
        what: `p50 echo turn at ${shortEvents} prior events`,
      },
      ratio: round(ratio),
      target: { op: "<=", value: 1.5 },
      details: {
        priorEventsLong: longEvents,
        priorEventsShort: shortEvents,
        turnsEach: turns,
        warmupTurns: warmup,
        harness: "echo in a host-spawned node (unix socket)",
        localRatio: round(ratioOf(local)),
        localLongMs: round(median(local.longMs)),
        localShortMs: round(median(local.shortMs)),
      },
    };
  },
};
