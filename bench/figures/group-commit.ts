// group_commit_appends_per_s, group_commit_ratio, group_commit_p99_ratio: 100 sessions appending at once
// (each session one echo-turn event per append, awaiting each append before its next) to a SQLite
// journal with group commit on, against the same load on a journal with group commit off — every append
// its own transaction and fsync, today's behaviour — and the p99 append latency under that load against
// one session appending alone with group commit off (the single-session anchor). Invariant: subject and
// baseline write the same event streams to databases in the same directory, in alternating
// repetitions; every append is awaited, so every counted append is durable.
import type { Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { echoEventStream } from "../lib/echo-turns.js";
import { median, percentile, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";
import { created } from "../../test/journal/sessions.js";

export interface ConcurrentAppends {
  /** Appends per second over the whole run (all sessions). */
  readonly perS: number;
  /** Every append's latency, ms. */
  readonly latencies: number[];
}

/** `sessions` sessions each appending `each` events, all at once; `tag` keeps session uids unique. */
export async function concurrentAppends(
  journal: Journal,
  sessions: number,
  each: number,
  events: readonly Event[],
  tag: string,
): Promise<ConcurrentAppends> {
  const latencies: number[] = [];
  await created(journal, ...Array.from({ length: sessions }, (_, s) => `${tag}-${s}`));
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      const session = `${tag}-${s}`;
      for (let i = 0; i < each; i++) {
        const a0 = performance.now();
        await journal.append(session, i, 0, events[i % events.length]!);
        latencies.push(performance.now() - a0);
      }
    }),
  );
  return { perS: (sessions * each) / ((performance.now() - t0) / 1000), latencies };
}

export const groupCommit: Figure = {
  key: "group_commit_appends_per_s",
  extraKeys: ["group_commit_ratio", "group_commit_p99_ratio"],
  title: "group commit: 100 sessions appending at once (SQLite) vs one append per fsync",
  async run(opts: RunOptions): Promise<FigureResult> {
    const sessions = opts.quick ? 20 : 100;
    const each = opts.quick ? 5 : 30;
    const singleAppends = opts.quick ? 40 : 400;
    const reps = opts.quick ? 1 : 5;
    const events = echoEventStream(Math.max(each, singleAppends));
    const dir = scratchDir("group-commit");
    const grouped = SqliteJournal.open(dir.file("grouped.db"));
    const single = SqliteJournal.open(dir.file("single.db"), { groupCommit: false });
    try {
      const subject: number[] = [];
      const baseline: number[] = [];
      const ratios: number[] = [];
      const groupedLat: number[] = [];
      const baselineLat: number[] = [];
      const aloneLat: number[] = [];
      const aloneGroupedLat: number[] = [];
      let batches = 0;
      let batchedWrites = 0;
      let inlineCheckpoints = 0;
      let backgroundCheckpoints = 0;
      // One unrecorded warm-up repetition, then `reps`, alternating which side goes first.
      for (let rep = 0; rep <= reps; rep++) {
        const runGrouped = async () => {
          const before = grouped.groupCommitStats;
          const ckptBefore = grouped.walCheckpointStats;
          const run = await concurrentAppends(grouped, sessions, each, events, `g${rep}`);
          const after = grouped.groupCommitStats;
          const ckptAfter = grouped.walCheckpointStats;
          if (rep > 0) {
            batches += after.batches - before.batches;
            batchedWrites += after.writes - before.writes;
            inlineCheckpoints += ckptAfter.inline - ckptBefore.inline;
            backgroundCheckpoints += ckptAfter.background - ckptBefore.background;
          }
          return run;
        };
        const runSingle = () => concurrentAppends(single, sessions, each, events, `b${rep}`);
        let g: ConcurrentAppends;
        let b: ConcurrentAppends;
        if (rep % 2 === 0) {
          g = await runGrouped();
          b = await runSingle();
        } else {
          b = await runSingle();
          g = await runGrouped();
        }
        const alone = await concurrentAppends(single, 1, singleAppends, events, `a${rep}`);
        const aloneGrouped = await concurrentAppends(grouped, 1, singleAppends, events, `ag${rep}`);
        if (rep === 0) continue;
        subject.push(g.perS);
        baseline.push(b.perS);
        ratios.push(g.perS / b.perS);
        groupedLat.push(...g.latencies);
        baselineLat.push(...b.latencies);
        aloneLat.push(...alone.latencies);
        aloneGroupedLat.push(...aloneGrouped.latencies);
      }
      const ratio = median(ratios);
      const p99 = percentile(groupedLat, 99);
      const aloneP99 = percentile(aloneLat, 99);
      const latencyNote = "append latency, ms";
      return {
        status: "ok",
        value: round(median(subject)),
        unit: "appends/s",
        measured: sampleOf(subject.map(round), "appends/s"),
        baseline: {
          ...sampleOf(baseline.map(round), "appends/s"),
          what: `the same ${sessions} sessions on a journal with groupCommit: false (one transaction and fsync per append)`,
        },
        ratio: round(ratio),
        details: {
          sessions,
          appendsPerSession: each,
          reps,
          writesPerBatch: round(batchedWrites / Math.max(1, batches)),
          // WAL checkpoints during the recorded grouped runs: on the worker thread, and inline (the
          // writer restarting the WAL, inside a batch) — src/journal/sqlite/checkpointer.ts.
          walCheckpointsBackground: backgroundCheckpoints,
          walCheckpointsInline: inlineCheckpoints,
          // Little's law: with every session waiting for its append before the next, the mean append
          // latency is sessions ÷ throughput whatever the commit does — the floor under groupedP50Ms.
          closedLoopMeanMs: round((sessions / median(subject)) * 1000),
          groupedP50Ms: round(median(groupedLat)),
          groupedP99Ms: round(p99),
          oneFsyncP50Ms: round(median(baselineLat)),
          oneFsyncP99Ms: round(percentile(baselineLat, 99)),
          singleSessionP50Ms: round(median(aloneLat)),
          singleSessionP99Ms: round(aloneP99),
          singleSessionGroupedP50Ms: round(median(aloneGroupedLat)),
          singleSessionGroupedP99Ms: round(percentile(aloneGroupedLat, 99)),
        },
        also: {
          group_commit_ratio: {
            value: round(ratio),
            unit: "×",
            target: { op: ">=", value: 5 },
            details: { what: "grouped appends/s over one-per-fsync appends/s, same sessions, same run" },
          },
          group_commit_p99_ratio: {
            value: round(p99 / aloneP99),
            unit: "×",
            measured: {
              ...sampleOf(groupedLat, latencyNote, true),
              median: round(median(groupedLat)),
              p99: round(p99),
            },
            baseline: {
              ...sampleOf(aloneLat, latencyNote, true),
              median: round(median(aloneLat)),
              p99: round(aloneP99),
              what: "one session appending alone, groupCommit: false",
            },
            target: { op: "<=", value: 2 },
          },
        },
      };
    } finally {
      await grouped.close();
      await single.close();
      dir.dispose();
    }
  },
};
