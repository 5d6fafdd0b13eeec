// The PostgreSQL the PostgreSQL figures run against. Invariant: every figure works in a schema of its
// own (`freshPgSchema`) and drops it in `finally`; an unreachable server makes the figure Unavailable
// with the reason, never a crash.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { Unavailable } from "./lazy.js";

/** HARNESSHOST_BENCH_PG_URL, else the test suite's HARNESSHOST_TEST_PG_URL, else the local server. */
export const BENCH_PG_URL =
  process.env["HARNESSHOST_BENCH_PG_URL"] ??
  process.env["HARNESSHOST_TEST_PG_URL"] ??
  "postgres://postgres@127.0.0.1:5432/test";

export function freshPgSchema(label: string): string {
  return `hh_bench_${label}_${randomBytes(4).toString("hex")}`;
}

/** A journal URL on BENCH_PG_URL naming `schema`. */
export function pgJournalUrl(schema: string): string {
  return `${BENCH_PG_URL}${BENCH_PG_URL.includes("?") ? "&" : "?"}schema=${schema}`;
}

/** Throws Unavailable when the server cannot be reached. */
export async function requirePg(): Promise<void> {
  const client = new pg.Client({ connectionString: BENCH_PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (err) {
    throw new Unavailable(
      `PostgreSQL at ${BENCH_PG_URL} unreachable: ${err instanceof Error ? err.message : String(err)}`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Runs one query on a short-lived connection (settings, activity samples, cleanup). */
export async function pgQuery<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: BENCH_PG_URL });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export async function dropPgSchema(schema: string): Promise<void> {
  await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
}
