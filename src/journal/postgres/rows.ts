// Row shapes of the PostgreSQL journal and their conversion to the Journal types. Invariant: every int8
// column (which `pg` returns as a decimal string) is turned back into a safe integer here, and a value
// that is not one is DataLoss, never a silently rounded number.
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { ErrorCode, HostError } from "../../errors/index.js";
import { EventSchema, IdentityRefSchema, OriginSchema, type Event } from "../../gen/agentsessions/v1/common_pb.js";
import { parseComputeState } from "../compute-state.js";
import type { SessionPin } from "../pin.js";
import { pinOfColumns, setPin, type SessionRow } from "../session-row.js";
import type { CheckpointRow, JournalRecord, RegistrationState, SessionInfo, StoredRegistration } from "../types.js";

/** int8 as `pg` hands it over (string), or a number where the query cast it. */
export type Int8 = string | number;

export interface SessionDbRow {
  uid: string;
  project: string;
  name: string;
  harness: string;
  model: string;
  parent_uid: string;
  fork_seq: Int8;
  labels: unknown;
  annotations: unknown;
  origin: Buffer | null;
  identity: Buffer | null;
  created_at_ms: Int8;
  updated_at_ms: Int8;
  fence: Int8;
  last_seq: Int8;
  last_hash: string;
  compute_state: string;
  pin_seq: Int8;
  pin_harness: string;
  pin_version: string;
  pin_digest: string;
}

export interface HeadDbRow {
  fence: Int8;
  last_seq: Int8;
  last_hash: string;
  compute_state: string;
  pin_seq: Int8;
  pin_harness: string;
  pin_version: string;
  pin_digest: string;
}

/** The pin columns (src/journal/pin.ts; pin_seq 0: no pin). */
export const PIN_SELECT = "pin_seq, pin_harness, pin_version, pin_digest";

export function pinOfRow(row: HeadDbRow | SessionDbRow): SessionPin | undefined {
  return pinOfColumns(int(row.pin_seq), row.pin_harness, row.pin_version, row.pin_digest);
}

export interface EventDbRow {
  seq: Int8;
  prev_hash: string;
  content_hash: string;
  fence: Int8;
  event: Buffer;
}

export interface RegistrationDbRow {
  name: string;
  uid: string;
  spec: string;
  spec_digest: string;
  state: string;
  retire_reason: string;
  retired_at_ms: Int8;
  created_at_ms: Int8;
  updated_at_ms: Int8;
}

export interface CheckpointDbRow {
  session: string;
  seq: Int8;
  content_hash: string;
  digest: string;
  created_at_ms: Int8;
}

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
  return [
    row.uid,
    row.project,
    row.name,
    row.harness,
    row.model,
    row.parentUid,
    row.forkSeq,
    JSON.stringify(row.labels),
    JSON.stringify(row.annotations),
    row.origin ? toBinary(OriginSchema, row.origin) : null,
    row.identity ? toBinary(IdentityRefSchema, row.identity) : null,
    row.createdAtMs,
    row.updatedAtMs,
    row.fence,
    row.lastSeq,
    row.lastHash,
    row.computeState,
    row.pin?.seq ?? 0,
    row.pin?.harness ?? "",
    row.pin?.version ?? "",
    row.pin?.digest ?? "",
  ];
}

export function sessionInfoOf(row: SessionDbRow): SessionInfo {
  const info: SessionRow = {
    uid: row.uid,
    project: row.project,
    name: row.name,
    harness: row.harness,
    model: row.model,
    parentUid: row.parent_uid,
    forkSeq: int(row.fork_seq),
    labels: stringMap(row.labels),
    annotations: stringMap(row.annotations),
    createdAtMs: int(row.created_at_ms),
    updatedAtMs: int(row.updated_at_ms),
    lastSeq: int(row.last_seq),
    lastHash: row.last_hash,
    fence: int(row.fence),
    computeState: parseComputeState(row.compute_state),
  };
  setPin(info, pinOfRow(row));
  if (row.origin) info.origin = fromBinary(OriginSchema, row.origin);
  if (row.identity) info.identity = fromBinary(IdentityRefSchema, row.identity);
  return info;
}

function stringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) if (typeof v === "string") out[k] = v;
  }
  return out;
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
  return {
    name: row.name,
    uid: row.uid,
    spec: row.spec,
    specDigest: row.spec_digest,
    state: parseRegistrationState(row.state),
    retireReason: row.retire_reason,
    retiredAtMs: int(row.retired_at_ms),
    createdAtMs: int(row.created_at_ms),
    updatedAtMs: int(row.updated_at_ms),
  };
}

function parseRegistrationState(state: string): RegistrationState {
  return state === "retired" ? "retired" : "active";
}

export function checkpointOf(row: CheckpointDbRow): CheckpointRow {
  return {
    session: row.session,
    seq: int(row.seq),
    contentHash: row.content_hash,
    digest: row.digest,
    createdAtMs: int(row.created_at_ms),
  };
}
