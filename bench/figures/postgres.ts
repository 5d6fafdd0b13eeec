// The PostgreSQL journal's figures, each against its SQLite counterpart or its one-transaction-per-append
// baseline in the same run (docs/scaling.md):
// - pg_append_p50_ms: one session appending echo-turn events one at a time (group commit on; p99 in
//   `measured.p99`), against the same appends on SQLite in alternating repetitions;
// - pg_group_commit_appends_per_s / pg_group_commit_ratio: 100 sessions appending at once, group commit
//   on (one transaction per batch on one connection) vs off (one transaction per append, on a pool of
//   10 connections in parallel — the PostgreSQL journal before group commit);
// - pg_turn_ratio: the p50 of an echo turn (in-process host, Placer.exec, local echo harness) on a
//   PostgreSQL journal over the same on SQLite, 24 alternating blocks of 10 turns each side.
// Invariant: every schema and directory the figure makes is removed in `finally`.
import { PostgresJournal } from "../../src/journal/postgres/journal.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { openEchoHost, type EchoHost } from "../lib/echo-host.js";
import { echoEventStream, promptText } from "../lib/echo-turns.js";
import { BENCH_PG_URL, dropPgSchema, freshPgSchema, pgJournalUrl, requirePg } from "../lib/pg.js";
import { median, percentile, round, sampleOf } from "../lib/stats.js";
import { scratchDir } from "../lib/tmp.js";
import type { Figure, FigureResult, RunOptions } from "../lib/types.js";
import { concurrentAppends } from "./group-commit.js";
import { created } from "../../test/journal/sessions.js";

async function sequentialLatencies(journal: Journal, session: string, count: number): Promise<number[]> {
  const events = echoEventStream(count);
  await created(journal, session);
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await journal.append(session, i, 0, events[i]!);
    out.push(performance.now() - t0);
  }
  return out;
}

async function turnLatencies(host: EchoHost, session: string, count: number, from: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await host.turn(session, promptText(from + i, 80));
    out.push(performance.now() - t0);
  }
  return out;
}

export const postgresFigures: Figure = {
  key: "pg_append_p50_ms",
  extraKeys: ["pg_group_commit_appends_per_s", "pg_group_commit_ratio", "pg_turn_ratio"],
  title: "PostgreSQL journal: append latency, group commit, echo turn vs SQLite",
  async run(opts: RunOptions): Promise<FigureResult> {
    await requirePg();
    const reps = opts.quick ? 1 : 3;
    const appendsPerRep = opts.quick ? 30 : 200;
    const sessions = opts.quick ? 20 : 100;
    const each = opts.quick ? 3 : 10;
    // Many short alternating blocks, so a change of machine load falls on both sides alike.
    const turnsPerBlock = opts.quick ? 5 : 10;
    const turnBlocks = opts.quick ? 1 : 24;
    const schemas = [freshPgSchema("grp"), freshPgSchema("off"), freshPgSchema("turn")] as const;
    const dir = scratchDir("pg");
    const journals: Journal[] = [];
    const hosts: EchoHost[] = [];
    try {
      const pgGrouped = await PostgresJournal.open(BENCH_PG_URL, { schema: schemas[0] });
      journals.push(pgGrouped);
      const pgOff = await PostgresJournal.open(BENCH_PG_URL, { schema: schemas[1], groupCommit: false });
      journals.push(pgOff);
      const sqlite = SqliteJournal.open(dir.file("append.db"));
      journals.push(sqlite);

      // Appends, one session: PostgreSQL vs SQLite, alternating (first repetition is warm-up).
      const pgLat: number[] = [];
      const sqliteLat: number[] = [];
      for (let rep = 0; rep <= reps; rep++) {
        const sides = [
          async () => sequentialLatencies(pgGrouped, `seq-${rep}`, appendsPerRep),
          async () => sequentialLatencies(sqlite, `seq-${rep}`, appendsPerRep),
        ];
        const order = rep % 2 === 0 ? [0, 1] : [1, 0];
        const got: number[][] = [[], []];
        for (const i of order) got[i] = await sides[i]!();
        if (rep === 0) continue;
        pgLat.push(...got[0]!);
        sqliteLat.push(...got[1]!);
      }

      // Group commit on PostgreSQL: 100 sessions, on vs off, alternating.
      const events = echoEventStream(each);
      const grouped: number[] = [];
      const off: number[] = [];
      const groupedP99: number[] = [];
      let batches = 0;
      let batchedWrites = 0;
      for (let rep = 0; rep <= reps; rep++) {
        const runGrouped = async () => {
          const before = pgGrouped.groupCommitStats;
          const run = await concurrentAppends(pgGrouped, sessions, each, events, `g${rep}`);
          const after = pgGrouped.groupCommitStats;
          if (rep > 0) {
            batches += after.batches - before.batches;
            batchedWrites += after.writes - before.writes;
            grouped.push(run.perS);
            groupedP99.push(...run.latencies);
          }
        };
        const runOff = async () => {
          const run = await concurrentAppends(pgOff, sessions, each, events, `b${rep}`);
          if (rep > 0) off.push(run.perS);
        };
        if (rep % 2 === 0) {
          await runGrouped();
          await runOff();
        } else {
          await runOff();
          await runGrouped();
        }
      }
      const groupRatio = median(grouped) / median(off);

      // Echo turns: PostgreSQL host vs SQLite host, alternating blocks.
      const pgHost = await openEchoHost(dir.file("pg-host"), "local", pgJournalUrl(schemas[2]));
      hosts.push(pgHost);
      const sqliteHost = await openEchoHost(dir.file("sqlite-host"));
      hosts.push(sqliteHost);
      const pgSession = await pgHost.newSession();
      const sqliteSession = await sqliteHost.newSession();
      const pgTurns: number[] = [];
      const sqliteTurns: number[] = [];
      for (let rep = 0; rep <= turnBlocks; rep++) {
        const order = rep % 2 === 0 ? ["pg", "sqlite"] : ["sqlite", "pg"];
        for (const side of order) {
          const lat =
            side === "pg"
              ? await turnLatencies(pgHost, pgSession, turnsPerBlock, rep * turnsPerBlock)
              : await turnLatencies(sqliteHost, sqliteSession, turnsPerBlock, rep * turnsPerBlock);
          if (rep > 0) (side === "pg" ? pgTurns : sqliteTurns).push(...lat);
        }
      }
      const turnRatio = median(pgTurns) / median(sqliteTurns);
      const latency = (xs: readonly number[]) => ({
        ...sampleOf(xs, "ms", true),
        median: round(median(xs)),
        p99: round(percentile(xs, 99)),
      });

      return {
        status: "ok",
        value: round(median(pgLat)),
        unit: "ms",
        measured: latency(pgLat),
        baseline: { ...latency(sqliteLat), what: "the same appends on SQLite (WAL, synchronous=FULL), same run" },
        ratio: round(median(pgLat) / median(sqliteLat)),
        details: { appendsPerRep, reps, server: BENCH_PG_URL.replace(/\/\/[^@]*@/, "//") },
        also: {
          pg_group_commit_appends_per_s: {
            value: round(median(grouped)),
            unit: "appends/s",
            measured: sampleOf(grouped.map(round), "appends/s"),
            baseline: {
              ...sampleOf(off.map(round), "appends/s"),
              what: "the same sessions with groupCommit: false (one transaction per append, 10 connections)",
            },
            ratio: round(groupRatio),
            details: {
              sessions,
              appendsPerSession: each,
              writesPerBatch: round(batchedWrites / Math.max(1, batches)),
              groupedP99Ms: round(percentile(groupedP99, 99)),
            },
          },
          pg_group_commit_ratio: {
            value: round(groupRatio),
            unit: "×",
            target: { op: ">=", value: 5 },
          },
          pg_turn_ratio: {
            value: round(turnRatio),
            unit: "×",
            measured: latency(pgTurns),
            baseline: { ...latency(sqliteTurns), what: "the same echo turns on a SQLite host, same run" },
            target: { op: "<=", value: 1.5 },
            details: {
              path: "in-process Host placer.exec, local echo harness (no client gRPC hop)",
              turnsPerBlock,
              blocks: turnBlocks,
            },
          },
        },
      };
    } finally {
      for (const h of hosts) await h.close().catch(() => undefined);
      for (const j of journals) await j.close().catch(() => undefined);
      for (const s of schemas) await dropPgSchema(s);
      dir.dispose();
    }
  },
};
