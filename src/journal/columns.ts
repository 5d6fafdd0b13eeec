// The stored columns of sessions, harness registrations and checkpoints, mapped once for both SQL
// backends. Invariant: one mapping each way between a row and its Journal value; a backend adapts only
// how its driver hands a column over (SQLite: integers as numbers, string maps as JSON text; PostgreSQL:
// int8 as decimal strings, string maps as jsonb objects) through a ColumnDecoding.
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { IdentityRefSchema, OriginSchema } from "../gen/agentsessions/v1/common_pb.js";
import { parseComputeState } from "./compute-state.js";
import type { SessionPin } from "./pin.js";
import { pinOfColumns, setPin, type SessionRow } from "./session-row.js";
import type { CheckpointRow, RegistrationState, SessionInfo, StoredRegistration } from "./values.js";

/** How a driver hands over an integer column (`I`) and a string-map column (`M`). */
export interface ColumnDecoding<I, M> {
  /** The column as a safe integer (a backend that can read a value that is not one throws DataLoss). */
  readonly int: (value: I) => number;
  readonly stringMap: (value: M) => Record<string, string>;
}

/** A session's pin columns (src/journal/pin.ts; pin_seq 0: no pin). */
export interface PinColumns<I> {
  pin_seq: I;
  pin_harness: string;
  pin_version: string;
  pin_digest: string;
}

/** A row of the sessions table, in column order. */
export interface SessionColumns<I, M> extends PinColumns<I> {
  uid: string;
  project: string;
  name: string;
  harness: string;
  model: string;
  parent_uid: string;
  fork_seq: I;
  labels: M;
  annotations: M;
  origin: Uint8Array | null;
  identity: Uint8Array | null;
  created_at_ms: I;
  updated_at_ms: I;
  fence: I;
  last_seq: I;
  last_hash: string;
  compute_state: string;
}

export interface RegistrationColumns<I> {
  name: string;
  uid: string;
  spec: string;
  spec_digest: string;
  state: string;
  retire_reason: string;
  retired_at_ms: I;
  created_at_ms: I;
  updated_at_ms: I;
}

export interface CheckpointColumns<I> {
  session: string;
  seq: I;
  content_hash: string;
  digest: string;
  created_at_ms: I;
}

/** The stored pin as a SessionPin (undefined: no pin). */
export function pinOfStored<I>(row: PinColumns<I>, int: (value: I) => number): SessionPin | undefined {
  return pinOfColumns(int(row.pin_seq), row.pin_harness, row.pin_version, row.pin_digest);
}

export function sessionInfoOfColumns<I, M>(row: SessionColumns<I, M>, decode: ColumnDecoding<I, M>): SessionInfo {
  const { int, stringMap } = decode;
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
  setPin(info, pinOfStored(row, int));
  if (row.origin) info.origin = fromBinary(OriginSchema, row.origin);
  if (row.identity) info.identity = fromBinary(IdentityRefSchema, row.identity);
  return info;
}

/** The columns stored for `row`, in the table's column order (string maps as JSON text). */
export function sessionColumnsOf(row: SessionRow): SessionColumns<number, string> {
  return {
    uid: row.uid,
    project: row.project,
    name: row.name,
    harness: row.harness,
    model: row.model,
    parent_uid: row.parentUid,
    fork_seq: row.forkSeq,
    labels: JSON.stringify(row.labels),
    annotations: JSON.stringify(row.annotations),
    origin: row.origin ? toBinary(OriginSchema, row.origin) : null,
    identity: row.identity ? toBinary(IdentityRefSchema, row.identity) : null,
    created_at_ms: row.createdAtMs,
    updated_at_ms: row.updatedAtMs,
    fence: row.fence,
    last_seq: row.lastSeq,
    last_hash: row.lastHash,
    compute_state: row.computeState,
    pin_seq: row.pin?.seq ?? 0,
    pin_harness: row.pin?.harness ?? "",
    pin_version: row.pin?.version ?? "",
    pin_digest: row.pin?.digest ?? "",
  };
}

/** The string-valued entries of a decoded map column (anything else is dropped). */
export function stringEntries(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) if (typeof v === "string") out[k] = v;
  }
  return out;
}

export function registrationOfColumns<I>(row: RegistrationColumns<I>, int: (value: I) => number): StoredRegistration {
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

/** The columns stored for a registration, by name. */
export function registrationColumnsOf(reg: StoredRegistration): RegistrationColumns<number> {
  return {
    name: reg.name,
    uid: reg.uid,
    spec: reg.spec,
    spec_digest: reg.specDigest,
    state: reg.state,
    retire_reason: reg.retireReason,
    retired_at_ms: reg.retiredAtMs,
    created_at_ms: reg.createdAtMs,
    updated_at_ms: reg.updatedAtMs,
  };
}

function parseRegistrationState(state: string): RegistrationState {
  return state === "retired" ? "retired" : "active";
}

export function checkpointOfColumns<I>(row: CheckpointColumns<I>, int: (value: I) => number): CheckpointRow {
  return {
    session: row.session,
    seq: int(row.seq),
    contentHash: row.content_hash,
    digest: row.digest,
    createdAtMs: int(row.created_at_ms),
  };
}
