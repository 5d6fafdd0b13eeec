// The SQLite journal's statements and row shapes: every SQL statement the backend runs, prepared once per
// connection, and the conversion of what they return to Journal values (the column mappings shared with
// PostgreSQL are ../columns.ts). Invariant: a session's head is read as the head row's values where one
// exists and the session row's anchor otherwise (schema version 2, schema.ts), by every statement that
// reads a head.
import type Database from "better-sqlite3";
import { fromBinary } from "@bufbuild/protobuf";
import { ErrorCode, HostError } from "../../errors/index.js";
import { EventSchema, type Event } from "../../gen/agentsessions/v1/common_pb.js";
import {
  type CheckpointColumns,
  type ColumnDecoding,
  type PinColumns,
  pinOfStored,
  type RegistrationColumns,
  type SessionColumns,
  sessionInfoOfColumns,
  stringEntries,
} from "../columns.js";
import { parseComputeState } from "../compute-state.js";
import type { SessionPin } from "../pin.js";
import type { SessionTip } from "../plan.js";
import type { SessionInfo } from "../types.js";
import { hashText } from "./hash.js";
import { HEAD_ROW_SEQ } from "./schema.js";

export type SessionDbRow = SessionColumns<number, string>;

export interface HeadDbRow extends PinColumns<number> {
  fence: number;
  last_seq: number;
  last_hash: string;
  compute_state: string;
  /** 1 when the session has a head row (else the head is the session row's anchor). */
  has_head: number;
}

/** An events row as EVENT_COLUMNS reads it (the hashes as text, whatever their stored form). */
export interface EventDbRow {
  seq: number;
  prev_hash: string;
  content_hash: string;
  fence: number;
  event: Uint8Array;
}

export type RegistrationDbRow = RegistrationColumns<number>;
export type CheckpointDbRow = CheckpointColumns<number>;

/** How better-sqlite3 hands the columns over: integers as numbers, string maps as JSON text. */
export const SQLITE_COLUMNS: ColumnDecoding<number, string> = {
  int: (n) => n,
  stringMap: (text) => stringEntries(text === "" ? {} : JSON.parse(text)),
};

/** A hash as insertEvent binds it (hash.ts hashColumn). */
type HashColumn = string | Buffer;

/** An events row's record columns, the hashes read back as text (hash.ts). */
const EVENT_COLUMNS = `seq, ${hashText("prev_hash")} AS prev_hash, ${hashText("content_hash")} AS content_hash, fence, event`;

export const LAST_SEQ_UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** A session row joined with its head row (schema 2): `FROM` clause for the head columns below. */
const FROM_SESSION_AND_HEAD = `FROM sessions s LEFT JOIN events h ON h.session = s.uid AND h.seq = ${HEAD_ROW_SEQ}`;
/** The session's head: the head row's values win, the session row's anchor stands in without one. */
const HEAD_COLUMNS = `COALESCE(h.head_seq, s.last_seq) AS last_seq, COALESCE(h.head_hash, s.last_hash) AS last_hash`;
/** The session row's pin (src/journal/pin.ts; pin_seq 0: no pin). */
const PIN_COLUMNS = "s.pin_seq, s.pin_harness, s.pin_version, s.pin_digest";
/** A full session row with its head, shaped like SessionDbRow. */
export const SESSION_WITH_HEAD = `SELECT s.uid, s.project, s.name, s.harness, s.model, s.parent_uid, s.fork_seq, s.labels, s.annotations,
  s.origin, s.identity, s.created_at_ms, MAX(s.updated_at_ms, COALESCE(h.head_at_ms, 0)) AS updated_at_ms, s.fence,
  ${HEAD_COLUMNS}, COALESCE(h.head_state, s.compute_state) AS compute_state, ${PIN_COLUMNS}
  ${FROM_SESSION_AND_HEAD}`;

/** Every statement of the journal, prepared once per connection. */
export interface Statements {
  readonly selectHead: Database.Statement<[string], HeadDbRow>;
  readonly selectSession: Database.Statement<[string], SessionDbRow>;
  readonly insertSession: Database.Statement;
  readonly moveHead: Database.Statement<[string, number, string, string, number]>;
  readonly anchorHead: Database.Statement<[number, string, string, number, string]>;
  readonly writePin: Database.Statement<[number, string, string, string, string]>;
  readonly pinnedSessions: Database.Statement<[string], { uid: string; version: string; digest: string }>;
  readonly insertEvent: Database.Statement<[string, number, HashColumn, HashColumn, number, Uint8Array]>;
  readonly mintFence: Database.Statement<[number, string], { fence: number }>;
  readonly readPage: Database.Statement<[string, number, number, number], EventDbRow>;
  readonly readPageRaw: Database.Statement<
    [string, number, number, number],
    [number, string, string, number, Uint8Array]
  >;
  readonly readEventsPageRaw: Database.Statement<[string, number, number, number], [number, Uint8Array]>;
  readonly maxSeq: Database.Statement<[string], { max_seq: number | null }>;
  readonly headAndMax: Database.Statement<[string], { last_seq: number; last_hash: string; max_seq: number | null }>;
  readonly recordHash: Database.Statement<[string, number], { content_hash: string }>;
  readonly removeEmptySession: Database.Statement<[string, string]>;
  readonly deleteEvents: Database.Statement<[string]>;
  readonly deleteCheckpoints: Database.Statement<[string]>;
  readonly deleteSession: Database.Statement<[string]>;
  readonly recordBytes: Database.Statement<[string, number], { bytes: number | null }>;
  readonly copyPrefix: Database.Statement<[string, string, number]>;
  readonly listFirst: Database.Statement<[string, number], SessionDbRow>;
  readonly listAfter: Database.Statement<[string, number, number, string, number], SessionDbRow>;
  readonly allUids: Database.Statement<[], { uid: string }>;
  readonly putRegistration: Database.Statement;
  readonly getRegistration: Database.Statement<[string], RegistrationDbRow>;
  readonly deleteRegistration: Database.Statement<[string, string]>;
  readonly listRegistrations: Database.Statement<[], RegistrationDbRow>;
  readonly putCheckpoint: Database.Statement<[string, number, string, string, number]>;
  readonly latestCheckpoint: Database.Statement<[string], CheckpointDbRow>;
  readonly checkpointDigests: Database.Statement<[], { digest: string }>;
}

export function prepareStatements(db: Database.Database): Statements {
  return {
    selectHead: db.prepare<[string], HeadDbRow>(
      `SELECT s.fence AS fence, ${HEAD_COLUMNS}, COALESCE(h.head_state, s.compute_state) AS compute_state,
         ${PIN_COLUMNS}, h.seq IS NOT NULL AS has_head ${FROM_SESSION_AND_HEAD} WHERE s.uid = ?`,
    ),
    selectSession: db.prepare<[string], SessionDbRow>(`${SESSION_WITH_HEAD} WHERE s.uid = ?`),
    insertSession: db.prepare(
      `INSERT INTO sessions (uid, project, name, harness, model, parent_uid, fork_seq, labels, annotations, origin,
         identity, created_at_ms, updated_at_ms, fence, last_seq, last_hash, compute_state, pin_seq, pin_harness,
         pin_version, pin_digest)
       VALUES (@uid, @project, @name, @harness, @model, @parent_uid, @fork_seq, @labels, @annotations, @origin,
         @identity, @created_at_ms, @updated_at_ms, @fence, @last_seq, @last_hash, @compute_state, @pin_seq,
         @pin_harness, @pin_version, @pin_digest)
       ON CONFLICT(uid) DO NOTHING`,
    ),
    /** Moves the head row (created on first use): the newest record's neighbour, so no second page. */
    moveHead: db.prepare<[string, number, string, string, number]>(
      `INSERT INTO events (session, seq, prev_hash, content_hash, fence, event, head_seq, head_hash, head_state, head_at_ms)
       VALUES (?, ${HEAD_ROW_SEQ}, '', '', 0, X'', ?, ?, ?, ?)
       ON CONFLICT(session, seq) DO UPDATE SET head_seq = excluded.head_seq, head_hash = excluded.head_hash,
         head_state = excluded.head_state, head_at_ms = excluded.head_at_ms`,
    ),
    /** The session row's anchor: written by the append that creates the head row. */
    anchorHead: db.prepare<[number, string, string, number, string]>(
      "UPDATE sessions SET last_seq = ?, last_hash = ?, compute_state = ?, updated_at_ms = ? WHERE uid = ?",
    ),
    /** The session row's pin, rewritten only by an append that changes it (a turn's start, an upgrade). */
    writePin: db.prepare<[number, string, string, string, string]>(
      "UPDATE sessions SET pin_seq = ?, pin_harness = ?, pin_version = ?, pin_digest = ? WHERE uid = ?",
    ),
    pinnedSessions: db.prepare<[string], { uid: string; version: string; digest: string }>(
      "SELECT uid, pin_version AS version, pin_digest AS digest FROM sessions WHERE pin_harness = ? AND pin_seq > 0 ORDER BY uid",
    ),
    insertEvent: db.prepare<[string, number, HashColumn, HashColumn, number, Uint8Array]>(
      "INSERT INTO events (session, seq, prev_hash, content_hash, fence, event) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    /** No row for a session that does not exist: the caller answers NOT_FOUND (src/journal/plan.ts). */
    mintFence: db.prepare<[number, string], { fence: number }>(
      "UPDATE sessions SET fence = fence + 1, updated_at_ms = ? WHERE uid = ? RETURNING fence",
    ),
    readPage: db.prepare<[string, number, number, number], EventDbRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE session = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?`,
    ),
    /** readPage in raw (array) mode: no per-row object with named keys, for bulk reads. */
    readPageRaw: db
      .prepare<[string, number, number, number], [number, string, string, number, Uint8Array]>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE session = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?`,
      )
      .raw(true),
    readEventsPageRaw: db
      .prepare<[string, number, number, number], [number, Uint8Array]>(
        "SELECT seq, event FROM events WHERE session = ? AND seq >= ? AND seq <= ? ORDER BY seq LIMIT ?",
      )
      .raw(true),
    maxSeq: db.prepare<[string], { max_seq: number | null }>(
      `SELECT MAX(seq) AS max_seq FROM events WHERE session = ? AND seq < ${HEAD_ROW_SEQ}`,
    ),
    headAndMax: db.prepare<[string], { last_seq: number; last_hash: string; max_seq: number | null }>(
      `SELECT ${HEAD_COLUMNS}, (SELECT MAX(seq) FROM events e WHERE e.session = s.uid AND e.seq < ${HEAD_ROW_SEQ}) AS max_seq
       ${FROM_SESSION_AND_HEAD} WHERE s.uid = ?`,
    ),
    recordHash: db.prepare<[string, number], { content_hash: string }>(
      `SELECT ${hashText("content_hash")} AS content_hash FROM events WHERE session = ? AND seq = ?`,
    ),
    removeEmptySession: db.prepare<[string, string]>(
      "DELETE FROM sessions WHERE uid = ? AND NOT EXISTS (SELECT 1 FROM events WHERE session = ?)",
    ),
    deleteEvents: db.prepare<[string]>("DELETE FROM events WHERE session = ?"),
    deleteCheckpoints: db.prepare<[string]>("DELETE FROM checkpoints WHERE session = ?"),
    deleteSession: db.prepare<[string]>("DELETE FROM sessions WHERE uid = ?"),
    recordBytes: db.prepare<[string, number], { bytes: number | null }>(
      "SELECT SUM(length(event)) AS bytes FROM events WHERE session = ? AND seq <= ?",
    ),
    copyPrefix: db.prepare<[string, string, number]>(
      "INSERT INTO events (session, seq, prev_hash, content_hash, fence, event) SELECT ?, seq, prev_hash, content_hash, fence, event FROM events WHERE session = ? AND seq <= ?",
    ),
    listFirst: db.prepare<[string, number], SessionDbRow>(
      `${SESSION_WITH_HEAD} WHERE s.project = ? ORDER BY s.created_at_ms DESC, s.uid ASC LIMIT ?`,
    ),
    listAfter: db.prepare<[string, number, number, string, number], SessionDbRow>(
      `${SESSION_WITH_HEAD} WHERE s.project = ? AND (s.created_at_ms < ? OR (s.created_at_ms = ? AND s.uid > ?))
       ORDER BY s.created_at_ms DESC, s.uid ASC LIMIT ?`,
    ),
    allUids: db.prepare<[], { uid: string }>("SELECT uid FROM sessions ORDER BY uid"),
    putRegistration: db.prepare(
      `INSERT INTO harnesses (name, uid, spec, spec_digest, state, retire_reason, retired_at_ms, created_at_ms, updated_at_ms)
       VALUES (@name, @uid, @spec, @spec_digest, @state, @retire_reason, @retired_at_ms, @created_at_ms, @updated_at_ms)
       ON CONFLICT(name) DO UPDATE SET uid = excluded.uid, spec = excluded.spec, spec_digest = excluded.spec_digest,
         state = excluded.state, retire_reason = excluded.retire_reason, retired_at_ms = excluded.retired_at_ms,
         created_at_ms = excluded.created_at_ms, updated_at_ms = excluded.updated_at_ms`,
    ),
    getRegistration: db.prepare<[string], RegistrationDbRow>("SELECT * FROM harnesses WHERE name = ?"),
    deleteRegistration: db.prepare<[string, string]>("DELETE FROM harnesses WHERE name = ? AND uid = ?"),
    listRegistrations: db.prepare<[], RegistrationDbRow>("SELECT * FROM harnesses ORDER BY name"),
    putCheckpoint: db.prepare<[string, number, string, string, number]>(
      `INSERT INTO checkpoints (session, seq, content_hash, digest, created_at_ms) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(session, seq) DO UPDATE SET content_hash = excluded.content_hash, digest = excluded.digest,
         created_at_ms = excluded.created_at_ms`,
    ),
    latestCheckpoint: db.prepare<[string], CheckpointDbRow>(
      "SELECT session, seq, content_hash, digest, created_at_ms FROM checkpoints WHERE session = ? ORDER BY seq DESC LIMIT 1",
    ),
    checkpointDigests: db.prepare<[], { digest: string }>("SELECT DISTINCT digest FROM checkpoints ORDER BY digest"),
  };
}

export function decodeStored(session: string, row: EventDbRow): Event {
  return decodeBytes(session, row.seq, row.event);
}

export function decodeBytes(session: string, seq: number, bytes: Uint8Array): Event {
  try {
    return fromBinary(EventSchema, bytes);
  } catch (err) {
    throw new HostError(ErrorCode.DataLoss, `session ${session}: event at seq ${seq} cannot be decoded`, {
      cause: err,
    });
  }
}

export function pinOfRow(row: PinColumns<number> | undefined): SessionPin | undefined {
  return row ? pinOfStored(row, SQLITE_COLUMNS.int) : undefined;
}

/** The tip a head row records (a session without a row: the empty tip). */
/** The tip of the head row read; undefined when the session has no row (the plan answers NOT_FOUND). */
export function tipOfHead(row: HeadDbRow | undefined): SessionTip | undefined {
  if (row === undefined) return undefined;
  const computeState = parseComputeState(row.compute_state);
  return { seq: row.last_seq, hash: row.last_hash, fence: row.fence, computeState, pin: pinOfRow(row) };
}

export function sessionInfoOf(row: SessionDbRow): SessionInfo {
  return sessionInfoOfColumns(row, SQLITE_COLUMNS);
}
