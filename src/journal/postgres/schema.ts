// The PostgreSQL journal's schema, its version stamp and its error classes. Invariant: after open the
// target schema is at exactly PG_SCHEMA_VERSION or open failed; migrations run under a transaction-level
// advisory lock so concurrent first opens serialise, and a newer stamp is refused (downgrades fail closed).
import { fromBinary } from "@bufbuild/protobuf";
import type pg from "pg";
import { z } from "zod";
import { ErrorCode, HostError } from "../../errors/index.js";
import { EventSchema } from "../../gen/agentsessions/v1/common_pb.js";
import { projectPin, type SessionPin } from "../pin.js";

/** The highest `harnesshost_schema.version` this build writes and understands. */
export const PG_SCHEMA_VERSION = 3;

/** A PostgreSQL schema name we are willing to interpolate into DDL and a search_path. */
export const PgSchemaName = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, "schema must match [a-z_][a-z0-9_]{0,62}");

const SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS sessions (
  uid           text PRIMARY KEY,
  project       text NOT NULL DEFAULT 'default',
  name          text NOT NULL DEFAULT '',
  harness       text NOT NULL DEFAULT '',
  model         text NOT NULL DEFAULT '',
  parent_uid    text NOT NULL DEFAULT '',
  fork_seq      bigint NOT NULL DEFAULT 0,
  labels        jsonb NOT NULL DEFAULT '{}',
  annotations   jsonb NOT NULL DEFAULT '{}',
  origin        bytea,
  identity      bytea,
  created_at_ms bigint NOT NULL,
  updated_at_ms bigint NOT NULL,
  fence         bigint NOT NULL DEFAULT 0,
  last_seq      bigint NOT NULL DEFAULT 0,
  last_hash     text NOT NULL DEFAULT '',
  compute_state text NOT NULL DEFAULT 'NONE'
);
CREATE INDEX IF NOT EXISTS sessions_project_created ON sessions (project, created_at_ms DESC, uid);
CREATE TABLE IF NOT EXISTS events (
  session      text NOT NULL,
  seq          bigint NOT NULL,
  prev_hash    text NOT NULL,
  content_hash text NOT NULL,
  fence        bigint NOT NULL,
  event        bytea NOT NULL,
  PRIMARY KEY (session, seq)
);
CREATE TABLE IF NOT EXISTS harnesses (
  name          text PRIMARY KEY,
  uid           text NOT NULL,
  spec          text NOT NULL,
  spec_digest   text NOT NULL,
  state         text NOT NULL CHECK (state IN ('active', 'retired')),
  retire_reason text NOT NULL DEFAULT '',
  retired_at_ms bigint NOT NULL DEFAULT 0,
  created_at_ms bigint NOT NULL,
  updated_at_ms bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
  session       text NOT NULL,
  seq           bigint NOT NULL,
  content_hash  text NOT NULL,
  digest        text NOT NULL,
  created_at_ms bigint NOT NULL,
  PRIMARY KEY (session, seq)
);
CREATE INDEX IF NOT EXISTS checkpoints_digest ON checkpoints (digest);
CREATE TABLE IF NOT EXISTS snapshot_blobs (
  digest        text PRIMARY KEY,
  size          bigint NOT NULL,
  chunks        integer NOT NULL,
  created_at_ms bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS snapshot_chunks (
  digest text NOT NULL REFERENCES snapshot_blobs (digest) ON DELETE CASCADE,
  idx    integer NOT NULL,
  data   bytea NOT NULL,
  PRIMARY KEY (digest, idx)
);
`;

/**
 * Version 2: the session row keeps its pin (src/journal/pin.ts: the harness version and build digest its
 * last turn or upgrade set; pin_seq 0 = none), written in the append transaction, and an index answers
 * "which sessions are pinned to this harness" in one query. An existing schema is backfilled once, in
 * the migration's transaction, by folding every session's records (backfillPins).
 */
const SCHEMA_V2_FROM_V1 = `
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS pin_seq bigint NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS pin_harness text NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS pin_version text NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS pin_digest text NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS sessions_pin ON sessions (pin_harness, pin_version, uid) WHERE pin_seq > 0;
`;

/**
 * Version 3: one verified position per session (docs/protocol.md §5.9): the seq and hash a host
 * verified the chain through and the projection folded there. Nothing to backfill (none is stored).
 */
const SCHEMA_V3_FROM_V2 = `
CREATE TABLE IF NOT EXISTS verified_positions (
  session       text PRIMARY KEY,
  seq           bigint NOT NULL,
  hash          text NOT NULL,
  projection    bytea NOT NULL,
  digest        text NOT NULL,
  created_at_ms bigint NOT NULL
);
`;

/** Records read per page while backfilling pins. */
const BACKFILL_PAGE = 2000;

/**
 * Sets every session's pin columns from its records: one keyset-paged pass over the events in
 * (session, seq) order. A record that cannot be decoded leaves its session unpinned (verify reports it).
 */
async function backfillPins(client: pg.ClientBase): Promise<void> {
  let after: { session: string; seq: string } | undefined;
  let session: string | undefined;
  let pin: SessionPin | undefined;
  let bad = false;
  const flush = async () => {
    if (session === undefined || pin === undefined || bad) return;
    await client.query(
      "UPDATE sessions SET pin_seq = $1, pin_harness = $2, pin_version = $3, pin_digest = $4 WHERE uid = $5",
      [pin.seq, pin.harness, pin.version, pin.digest, session],
    );
  };
  for (;;) {
    const page = await client.query<{ session: string; seq: string; event: Buffer }>(
      after === undefined
        ? "SELECT session, seq::text AS seq, event FROM events ORDER BY session, seq LIMIT $1"
        : "SELECT session, seq::text AS seq, event FROM events WHERE (session, seq) > ($2, $3::bigint) ORDER BY session, seq LIMIT $1",
      after === undefined ? [BACKFILL_PAGE] : [BACKFILL_PAGE, after.session, after.seq],
    );
    for (const row of page.rows) {
      if (row.session !== session) {
        await flush();
        session = row.session;
        pin = undefined;
        bad = false;
      }
      if (bad) continue;
      try {
        pin = projectPin(pin, Number(row.seq), fromBinary(EventSchema, row.event));
      } catch {
        bad = true;
      }
    }
    const last = page.rows.at(-1);
    if (page.rows.length < BACKFILL_PAGE || last === undefined) break;
    after = { session: last.session, seq: last.seq };
  }
  await flush();
}

/**
 * Indexes that only speed reads up (ListSessions by harness; fork children by parent). They change no
 * stored format, so they carry no version stamp: every open creates the missing ones inside the
 * migration transaction (an existing schema gets them on its first open by this build — a one-time
 * build that holds writes to sessions while it runs; an older build still opens it).
 */
export const LIST_INDEXES = `
CREATE INDEX IF NOT EXISTS sessions_project_harness_created ON sessions (project, harness, created_at_ms DESC, uid);
CREATE INDEX IF NOT EXISTS sessions_parent_created ON sessions (parent_uid, created_at_ms DESC, uid);
`;

/** Quotes an already-validated schema name as an identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function refuseVersion(version: number): never {
  throw new HostError(
    ErrorCode.FailedPrecondition,
    `journal schema version ${version} is newer than this build supports (${PG_SCHEMA_VERSION})`,
  );
}

/**
 * Creates (if missing) `schema` and its tables, or checks their stamp. Runs in one transaction holding
 * `pg_advisory_xact_lock` keyed on the schema name, so racing first opens apply the DDL once. The
 * client's search_path must already name `schema` (it is evaluated per statement, so creating the
 * schema inside the transaction is enough for the following DDL to land in it).
 */
export async function migrate(client: pg.ClientBase, schema: string | undefined): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`harnesshost-migrate:${schema ?? ""}`]);
    if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await client.query(
      "CREATE TABLE IF NOT EXISTS harnesshost_schema (version integer PRIMARY KEY, applied_at_ms bigint NOT NULL)",
    );
    const seen = await client.query<{ version: number | null }>(
      "SELECT MAX(version) AS version FROM harnesshost_schema",
    );
    const version = seen.rows[0]?.version ?? 0;
    if (version > PG_SCHEMA_VERSION) refuseVersion(version);
    if (version < PG_SCHEMA_VERSION) {
      if (version < 1) await client.query(SCHEMA_V1);
      if (version < 2) await client.query(SCHEMA_V2_FROM_V1);
      if (version === 1) await backfillPins(client);
      await client.query(SCHEMA_V3_FROM_V2);
      await client.query("INSERT INTO harnesshost_schema (version, applied_at_ms) VALUES ($1, $2)", [
        PG_SCHEMA_VERSION,
        Date.now(),
      ]);
    }
    await client.query(LIST_INDEXES);
    await client.query("COMMIT");
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  }
}

function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** unique_violation: a concurrent writer inserted the same (session, seq) first. */
export function isUniqueViolation(err: unknown): boolean {
  return sqlState(err) === "23505";
}

/** serialization_failure or deadlock_detected: the transaction lost a race and may simply be retried. */
export function isSerializationFailure(err: unknown): boolean {
  const state = sqlState(err);
  return state === "40001" || state === "40P01";
}
