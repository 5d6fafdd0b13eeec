// The SQLite journal's schema and its version stamp. Invariant: a database is either at exactly
// SQLITE_SCHEMA_VERSION after open, or open fails; a newer stamp is refused (downgrades fail closed).
import { fromBinary } from "@bufbuild/protobuf";
import type BetterSqlite3 from "better-sqlite3";
import { ErrorCode, HostError } from "../../errors/index.js";
import { EventSchema } from "../../gen/agentsessions/v1/common_pb.js";
import { projectPin, type SessionPin } from "../pin.js";

/** The `PRAGMA user_version` this build writes and understands. */
export const SQLITE_SCHEMA_VERSION = 5;

/**
 * The versions a read-only open can serve as they are: version 4 only changed how new rows are written
 * (hash.ts) and reads version-3 rows unchanged, so a version-3 file needs no upgrade to be read;
 * version 5 only added the verified_positions table, which a reader of an older file finds empty.
 */
const READABLE_AS_IS: readonly number[] = [3, 4, SQLITE_SCHEMA_VERSION];

/**
 * The events-table key of a session's head row (INT64 max, an SQL literal: never a JS number). It sorts
 * after every record of its session, so it is the newest record's neighbour in the same B-tree —
 * usually the same leaf page — and moving the head in an append writes no second page.
 */
export const HEAD_ROW_SEQ = "9223372036854775807";

/** Version 1: sessions carry the head pointer (last_seq, last_hash, compute_state), moved by every append. */
export const SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS sessions (
  uid           TEXT PRIMARY KEY,
  project       TEXT NOT NULL DEFAULT 'default',
  name          TEXT NOT NULL DEFAULT '',
  harness       TEXT NOT NULL DEFAULT '',
  model         TEXT NOT NULL DEFAULT '',
  parent_uid    TEXT NOT NULL DEFAULT '',
  fork_seq      INTEGER NOT NULL DEFAULT 0,
  labels        TEXT NOT NULL DEFAULT '{}',
  annotations   TEXT NOT NULL DEFAULT '{}',
  origin        BLOB,
  identity      BLOB,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  fence         INTEGER NOT NULL DEFAULT 0,
  last_seq      INTEGER NOT NULL DEFAULT 0,
  last_hash     TEXT NOT NULL DEFAULT '',
  compute_state TEXT NOT NULL DEFAULT 'NONE'
);
CREATE INDEX IF NOT EXISTS sessions_project_created ON sessions(project, created_at_ms DESC, uid);
CREATE TABLE IF NOT EXISTS events (
  session      TEXT NOT NULL,
  seq          INTEGER NOT NULL,
  prev_hash    TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  fence        INTEGER NOT NULL,
  event        BLOB NOT NULL,
  PRIMARY KEY (session, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS harnesses (
  name          TEXT PRIMARY KEY,
  uid           TEXT NOT NULL,
  spec          TEXT NOT NULL,
  spec_digest   TEXT NOT NULL,
  state         TEXT NOT NULL CHECK (state IN ('active', 'retired')),
  retire_reason TEXT NOT NULL DEFAULT '',
  retired_at_ms INTEGER NOT NULL DEFAULT 0,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
  session       TEXT NOT NULL,
  seq           INTEGER NOT NULL,
  content_hash  TEXT NOT NULL,
  digest        TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  PRIMARY KEY (session, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS checkpoints_digest ON checkpoints(digest);
`;

/**
 * Version 2: the head pointer moves to a head row in the events table (seq = HEAD_ROW_SEQ; only that
 * row sets the head_* columns; its other columns are placeholders). The sessions row's head columns
 * become the anchor written by a session's first append (and by every append of a version-1 session
 * until it has a head row), so a session whose every events row was deleted still reads as truncated.
 * Readers take the head row's values when it exists, else the anchor's: no data is rewritten.
 */
const SCHEMA_V2_FROM_V1 = `
ALTER TABLE events ADD COLUMN head_seq INTEGER;
ALTER TABLE events ADD COLUMN head_hash TEXT;
ALTER TABLE events ADD COLUMN head_state TEXT;
ALTER TABLE events ADD COLUMN head_at_ms INTEGER;
`;

/**
 * Version 3: the session row keeps its pin (src/journal/pin.ts: the harness version and build digest its
 * last turn or upgrade set; pin_seq 0 = none), written by the append that changes it, and an index
 * answers "which sessions are pinned to this harness" in one query. An existing database is backfilled
 * once, in the migration's transaction, by folding every session's records (backfillPins).
 */
const SCHEMA_V3_FROM_V2 = `
ALTER TABLE sessions ADD COLUMN pin_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN pin_harness TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN pin_version TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN pin_digest TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS sessions_pin ON sessions(pin_harness, pin_version, uid) WHERE pin_seq > 0;
`;

/**
 * Version 4: events.prev_hash and events.content_hash hold a canonical hash as its 32 bytes (a BLOB)
 * instead of 64 hex characters (src/journal/sqlite/hash.ts), 64 bytes less per record. The columns keep
 * their declared type (TEXT affinity stores a BLOB as given) and readers take both forms, so nothing is
 * altered or rewritten: rows written before the upgrade keep their text hashes and read back the same.
 * The stamp keeps older builds (which would read a BLOB as a hash string) from opening the file.
 */

/**
 * Version 5: one verified position per session (docs/protocol.md §5.9, src/journal/sqlite/verified.ts):
 * the seq and hash a host verified the chain through and the projection folded there.
 */
export const SCHEMA_V5_FROM_V4 = `
CREATE TABLE IF NOT EXISTS verified_positions (
  session       TEXT PRIMARY KEY,
  seq           INTEGER NOT NULL,
  hash          TEXT NOT NULL,
  projection    BLOB NOT NULL,
  digest        TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL
) WITHOUT ROWID;
`;

/**
 * Indexes that only speed reads up (ListSessions by harness; fork children by parent). They change no
 * stored format, so they carry no version: every writable open creates the missing ones (an existing
 * database gets them on its first open by this build; an older build still opens it, and SQLite keeps
 * them current on every write whoever writes).
 */
export const LIST_INDEXES = `
CREATE INDEX IF NOT EXISTS sessions_project_harness_created ON sessions(project, harness, created_at_ms DESC, uid);
CREATE INDEX IF NOT EXISTS sessions_parent_created ON sessions(parent_uid, created_at_ms DESC, uid);
`;

function readVersion(db: BetterSqlite3.Database): number {
  return Number(db.pragma("user_version", { simple: true }));
}

function refuseVersion(version: number): never {
  if (version < 0) {
    throw new HostError(ErrorCode.FailedPrecondition, `journal schema version ${version} is invalid`);
  }
  throw new HostError(
    ErrorCode.FailedPrecondition,
    `journal schema version ${version} is newer than this build supports (${SQLITE_SCHEMA_VERSION})`,
  );
}

/**
 * Creates or checks the schema, then creates missing LIST_INDEXES. The stamp is re-read under the write
 * lock so racing openers agree.
 */
export function migrate(db: BetterSqlite3.Database): void {
  migrateVersion(db);
  db.exec(LIST_INDEXES);
}

function migrateVersion(db: BetterSqlite3.Database): void {
  const seen = readVersion(db);
  if (seen === SQLITE_SCHEMA_VERSION) return;
  if (seen > SQLITE_SCHEMA_VERSION || seen < 0) refuseVersion(seen);
  db.transaction(() => {
    const version = readVersion(db);
    if (version === SQLITE_SCHEMA_VERSION) return;
    if (version < 0 || version > 4) refuseVersion(version);
    if (version === 0) db.exec(SCHEMA_V1);
    if (version < 2) db.exec(SCHEMA_V2_FROM_V1);
    if (version < 3) db.exec(SCHEMA_V3_FROM_V2);
    if (version !== 0 && version < 3) backfillPins(db);
    // Version 4 changes how rows are written, not the tables: nothing to run.
    if (version < 5) db.exec(SCHEMA_V5_FROM_V4);
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
  }).immediate();
}

/**
 * Sets every session's pin columns from its records (the version-3 migration of an existing database):
 * one pass over the events in (session, seq) order, in the migration's transaction. A record that
 * cannot be decoded leaves its session unpinned (verify reports the session).
 */
function backfillPins(db: BetterSqlite3.Database): void {
  const write = db.prepare<[number, string, string, string, string]>(
    "UPDATE sessions SET pin_seq = ?, pin_harness = ?, pin_version = ?, pin_digest = ? WHERE uid = ?",
  );
  const rows = db
    .prepare<[], [string, number, Uint8Array]>(
      `SELECT session, seq, event FROM events WHERE seq < ${HEAD_ROW_SEQ} ORDER BY session, seq`,
    )
    .raw(true);
  let session: string | undefined;
  let pin: SessionPin | undefined;
  let bad = false;
  // Written after the scan: better-sqlite3 runs no statement while an iterator is open.
  const found: [string, SessionPin][] = [];
  const flush = () => {
    if (session !== undefined && pin !== undefined && !bad) found.push([session, pin]);
  };
  for (const [uid, seq, bytes] of rows.iterate()) {
    if (uid !== session) {
      flush();
      session = uid;
      pin = undefined;
      bad = false;
    }
    if (bad) continue;
    try {
      pin = projectPin(pin, seq, fromBinary(EventSchema, bytes));
    } catch {
      bad = true;
    }
  }
  flush();
  for (const [uid, p] of found) write.run(p.seq, p.harness, p.version, p.digest, uid);
}

/**
 * For a read-only open: nothing can be upgraded, so the file must be at a version this build reads as
 * it is (READABLE_AS_IS: this build's, or version 3).
 */
export function requireReadableVersion(db: BetterSqlite3.Database): void {
  const seen = readVersion(db);
  if (READABLE_AS_IS.includes(seen)) return;
  if (seen > SQLITE_SCHEMA_VERSION || seen < 0) refuseVersion(seen);
  throw new HostError(
    ErrorCode.FailedPrecondition,
    `journal schema version ${seen} must be upgraded to ${SQLITE_SCHEMA_VERSION} by one writable open first (this open is read-only)`,
  );
}

/**
 * Switches to WAL. The busy handler does not cover a journal-mode switch, so a concurrent opener can
 * see SQLITE_BUSY here; retry with a short backoff up to the busy timeout. Returns the mode it is in
 * ("memory" for an in-memory database, which has no WAL).
 */
export function enableWal(db: BetterSqlite3.Database, timeoutMs: number): "wal" | "memory" {
  const deadline = Date.now() + timeoutMs;
  let backoffMs = 2;
  for (;;) {
    try {
      const mode = String(db.pragma("journal_mode = WAL", { simple: true }));
      if (mode !== "wal" && mode !== "memory") {
        throw new HostError(ErrorCode.FailedPrecondition, `journal could not switch to WAL (mode is ${mode})`);
      }
      return mode;
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, backoffMs);
      backoffMs = Math.min(backoffMs * 2, 100);
    }
  }
}

export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
}

/** The database file itself cannot be read: a corrupt page, not a database, or an I/O error. */
export function isUnreadable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    typeof code === "string" &&
    (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB") || code.startsWith("SQLITE_IOERR"))
  );
}

export function isPrimaryKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}
