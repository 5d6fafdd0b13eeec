// long_session_ratio: p50 of an echo turn through placement (Host → Placer → local echo → SQLite) on
// a session with 10,000 prior events, over the p50 on a session with 10 prior events. Invariant: both
// sessions live in the same journal and their turns alternate, so only the session length differs.
import { echoEventStream, promptText } from "../lib/echo-turns.js";
import { openEchoHost } from "../lib/echo-host.js";
import { median, percentile, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";

export const longSession: Figure = {
  key: "long_session_ratio",
  title: "turn cost at 10,000 prior events vs at 10",
  async run(opts: RunOptions): Promise<FigureResult> {
    const longEvents = opts.quick ? 500 : 10_000;
    const shortEvents = 10;
    const warmup = opts.quick ? 2 : 5;
    const turns = opts.quick ? 5 : 40;
    const dir = scratchDir("long");
    const host = await openEchoHost(dir.path);
    try {
      const seed = async (events: number): Promise<string> => {
        const uid = await host.newSession();
        const fence = await host.journal.newFence(uid);
        await host.journal.appendBatch(uid, 0, fence, echoEventStream(events));
        return uid;
      };
      const short = await seed(shortEvents);
      const long = await seed(longEvents);
      const shortMs: number[] = [];
      const longMs: number[] = [];
      for (let i = 0; i < warmup + turns; i++) {
        // Alternate which session goes first so neither always follows the other's fsync.
        const order: [string, number[]][] = i % 2 === 0 ? [[short, shortMs], [long, longMs]] : [[long, longMs], [short, shortMs]];
        for (const [session, into] of order) {
          const text = promptText(i);
          const t0 = performance.now();
          const result = await host.turn(session, text);
          const ms = performance.now() - t0;
          if (result.outputs[0] !== `echo:${text}`) throw new Error(`echo turn answered ${JSON.stringify(result.outputs[0])}`);
          if (i >= warmup) into.push(ms);
        }
      }
      const ratio = median(longMs) / median(shortMs);
      return {
        status: "ok",
        value: round(ratio),
        unit: "×",
        measured: { ...sampleOf(longMs.map(round), "ms", true), p99: round(percentile(longMs, 99)) },
        baseline: { ...sampleOf(shortMs.map(round), "ms", true), p99: round(percentile(shortMs, 99)), what: `p50 echo turn at ${shortEvents} prior events` },
        ratio: round(ratio),
        target: { op: "<=", value: 1.5 },
        details: { priorEventsLong: longEvents, priorEventsShort: shortEvents, turnsEach: turns, warmupTurns: warmup, assembly: host.assembly },
      };
    } finally {
      await host.close();
      dir.dispose();
    }
  },
};
