// Row shapes of the PostgreSQL journal and their conversion to the Journal types (the mappings shared
// with SQLite are columns.ts; this file adapts `pg`'s column forms to them). Invariant: every int8
// column (which `pg` returns as a decimal string) is turned back into a safe integer here, and a value
// that is not one is DataLoss, never a silently rounded number.
import { fromBinary } from "@bufbuild/protobuf";
import { ErrorCode, HostError } from "../../errors/index.js";
import { EventSchema, type Event } from "../../gen/agentsessions/v1/common_pb.js";
import {
  type CheckpointColumns,
  checkpointOfColumns,
  type ColumnDecoding,
  type PinColumns,
  pinOfStored,
  type RegistrationColumns,
  registrationOfColumns,
  type SessionColumns,
  sessionColumnsOf,
  sessionInfoOfColumns,
  stringEntries,
} from "../columns.js";
import type { SessionPin } from "../pin.js";
import type { SessionRow } from "../session-row.js";
import type { CheckpointRow, JournalRecord, SessionInfo, StoredRegistration } from "../types.js";

/** int8 as `pg` hands it over (string), or a number where the query cast it. */
export type Int8 = string | number;

export type SessionDbRow = SessionColumns<Int8, unknown>;

export interface HeadDbRow extends PinColumns<Int8> {
  fence: Int8;
  last_seq: Int8;
  last_hash: string;
  compute_state: string;
}

/** The pin columns (src/journal/pin.ts; pin_seq 0: no pin). */
export const PIN_SELECT = "pin_seq, pin_harness, pin_version, pin_digest";

export function pinOfRow(row: PinColumns<Int8>): SessionPin | undefined {
  return pinOfStored(row, int);
}

export interface EventDbRow {
  seq: Int8;
  prev_hash: string;
  content_hash: string;
  fence: Int8;
  event: Buffer;
}

export type RegistrationDbRow = RegistrationColumns<Int8>;
export type CheckpointDbRow = CheckpointColumns<Int8>;

/** How `pg` hands the columns over: int8 as decimal strings, jsonb maps as objects. */
const PG_COLUMNS: ColumnDecoding<Int8, unknown> = { int, stringMap: stringEntries };

export function int(value: Int8): number {
  const n = typeof value === "number" ? value : Number(value);
  if (!Number.isSafeInteger(n))
    throw new HostError(ErrorCode.DataLoss, `stored integer ${String(value)} is not a safe integer`);
  return n;
}

/** The parameters of `INSERT INTO sessions (…SESSION_COLUMNS) VALUES ($1..$17)`, in column order. */
export const SESSION_COLUMNS =
  "uid, project, name, harness, model, parent_uid, fork_seq, labels, annotations, origin, identity, created_at_ms, updated_at_ms, fence, last_seq, last_hash, compute_state, pin_seq, pin_harness, pin_version, pin_digest";
export const SESSION_VALUES =
  "$1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21";

export function sessionParams(row: SessionRow): Array<string | number | Uint8Array | null> {
  return Object.values(sessionColumnsOf(row));
}

export function sessionInfoOf(row: SessionDbRow): SessionInfo {
  return sessionInfoOfColumns(row, PG_COLUMNS);
}

export function decodeEvent(session: string, row: EventDbRow): Event {
  try {
    return fromBinary(EventSchema, row.event);
  } catch (err) {
    throw new HostError(ErrorCode.DataLoss, `session ${session}: event at seq ${String(row.seq)} cannot be decoded`, {
      cause: err,
    });
  }
}

export function recordOf(session: string, row: EventDbRow): JournalRecord {
  return {
    seq: int(row.seq),
    prevHash: row.prev_hash,
    contentHash: row.content_hash,
    fence: int(row.fence),
    event: decodeEvent(session, row),
  };
}

export function registrationOf(row: RegistrationDbRow): StoredRegistration {
  return registrationOfColumns(row, int);
}

export function checkpointOf(row: CheckpointDbRow): CheckpointRow {
  return checkpointOfColumns(row, int);
}
