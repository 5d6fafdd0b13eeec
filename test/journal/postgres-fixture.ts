// PostgreSQL test plumbing shared by the journal and snapshot-store tests: every test works in its own
// random schema, dropped afterwards. The server must be reachable (CI starts it): an unreachable
// server fails the tests rather than skipping them.
import { randomBytes } from "node:crypto";
import pg from "pg";

export const PG_URL = process.env["HARNESSHOST_TEST_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";

/** A fresh schema name, unique per call. */
export function freshSchema(): string {
  return `hh_test_${randomBytes(6).toString("hex")}`;
}

/** A plain client whose search_path is `schema`, for raw SQL behind the journal's back. */
export async function rawClient(schema: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`SET search_path TO "${schema}"`);
  return client;
}

export async function dropSchemas(schemas: readonly string[]): Promise<void> {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
