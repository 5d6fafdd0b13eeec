// Scaling figures for docs/scaling.md (not part of CI): hash-chained append and echo-turn throughput
// in process on SQLite vs PostgreSQL, then echo turns/s over gRPC with one vs two `serve` processes on
// one PostgreSQL schema (sessions spread round-robin over the hosts). Invariant: every figure runs the
// same event stream or the same client load on each side, and every schema and temp dir it makes is
// dropped. Run: `npx tsx test/multihost/bench.ts [--quick]`.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { textMessage } from "../../src/controller/events.js";
import { Host } from "../../src/host/host.js";
import { PostgresJournal } from "../../src/journal/postgres/journal.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { echoEventStream } from "../../bench/lib/echo-turns.js";
import { dropSchemas } from "../journal/postgres-fixture.js";
import { Cluster, journalUrl, mhSchema } from "./cluster.js";
import { created } from "../journal/sessions.js";

const quick = process.argv.includes("--quick");
const APPENDS = quick ? 100 : 1000;
const TURNS = quick ? 40 : 300;
const SESSIONS = 8;
const TURNS_PER_SESSION = quick ? 5 : 40;

const rate = (n: number, ms: number): number => Math.round((n * 1000) / ms);

/** Sequential single-event appends on one session, plus the same spread over 8 sessions at once. */
async function appends(journal: Journal): Promise<{ seq: number; concurrent: number }> {
  const events = echoEventStream(APPENDS);
  await created(journal, "bench-seq", ...Array.from({ length: SESSIONS }, (_, s) => `bench-par-${s}`));
  let t = performance.now();
  for (const [i, e] of events.entries()) await journal.append("bench-seq", i, 1, e);
  const seq = rate(APPENDS, performance.now() - t);
  t = performance.now();
  const per = Math.floor(APPENDS / SESSIONS);
  await Promise.all(
    Array.from({ length: SESSIONS }, async (_, s) => {
      for (let i = 0; i < per; i++) await journal.append(`bench-par-${s}`, i, 1, events[i]!);
    }),
  );
  return { seq, concurrent: rate(per * SESSIONS, performance.now() - t) };
}

/** Echo turns through the Placer (no gRPC): sequential on one session, and 8 sessions at once. */
async function turns(host: Host): Promise<{ seq: number; concurrent: number }> {
  const signal = new AbortController().signal;
  const one = await host.createSession({ harness: "echo" });
  let t = performance.now();
  for (let i = 0; i < TURNS; i++)
    await host.placer.exec({ session: one.uid, inputs: [textMessage("user", `t${i}`)], signal });
  const seq = rate(TURNS, performance.now() - t);
  const many = await Promise.all(Array.from({ length: SESSIONS }, () => host.createSession({ harness: "echo" })));
  const per = Math.floor(TURNS / SESSIONS);
  t = performance.now();
  await Promise.all(
    many.map(async (s) => {
      for (let i = 0; i < per; i++)
        await host.placer.exec({ session: s.uid, inputs: [textMessage("user", `t${i}`)], signal });
    }),
  );
  return { seq, concurrent: rate(per * SESSIONS, performance.now() - t) };
}

async function inProcess(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), "hh-mh-bench-"));
  const schema = mhSchema();
  try {
    const sqlite = SqliteJournal.open(join(dir, "append.db"));
    const sqliteAppend = await appends(sqlite);
    await sqlite.close();
    const pg = await PostgresJournal.open(journalUrl(schema));
    const pgAppend = await appends(pg);
    await pg.close();
    await dropSchemas([schema]);

    const sqliteHost = await Host.open({ dataDir: join(dir, "host"), nodeIdleMs: 0 });
    const sqliteTurns = await turns(sqliteHost);
    await sqliteHost.close();
    const pgHost = await Host.open({ dataDir: join(dir, "pghost"), journal: journalUrl(schema), nodeIdleMs: 0 });
    const pgTurns = await turns(pgHost);
    await pgHost.close();
    return {
      append_per_s: { sqlite: sqliteAppend, postgres: pgAppend },
      echo_turn_per_s: { sqlite: sqliteTurns, postgres: pgTurns },
    };
  } finally {
    await dropSchemas([schema]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Echo turns/s over gRPC: SESSIONS client loops, session i on host i mod hosts. */
async function served(hosts: number): Promise<number> {
  const cluster = await Cluster.start(hosts);
  try {
    const sessions = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, i) => {
        const res = await cluster.host(i % hosts).api.exec({ harness: "echo", inputs: ["warm"] });
        return res.session.metadata?.uid ?? "";
      }),
    );
    const t = performance.now();
    await Promise.all(
      sessions.map(async (s, i) => {
        const api = cluster.host(i % hosts).api;
        for (let k = 0; k < TURNS_PER_SESSION; k++) await api.exec({ session: s, inputs: [`t${k}`] });
      }),
    );
    return rate(SESSIONS * TURNS_PER_SESSION, performance.now() - t);
  } finally {
    await cluster.close();
  }
}

const report = {
  machine: {
    cpus: cpus().length,
    model: cpus()[0]?.model ?? "",
    loadavg_before: loadavg().map((l) => Math.round(l * 10) / 10),
  },
  sizes: { appends: APPENDS, turns: TURNS, sessions: SESSIONS, grpc_turns_per_session: TURNS_PER_SESSION },
  ...(await inProcess()),
  grpc_echo_turn_per_s: { one_host: await served(1), two_hosts: await served(2) },
  loadavg_after: loadavg().map((l) => Math.round(l * 10) / 10),
};
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
