// The session metadata every backend keeps next to the records, with its head pointer (last_seq,
// last_hash), which moves only inside the append transaction — what lets verify detect a truncated tail.
// (SQLite keeps the head in a row beside the newest record and the session row as its anchor.)
import { clone } from "@bufbuild/protobuf";
import { ErrorCode, HostError } from "../errors/index.js";
import { IdentityRefSchema, OriginSchema } from "../gen/agentsessions/v1/common_pb.js";
import type { SessionPin } from "./pin.js";
import type { ComputeStateName, ImportedSessionMeta, SessionInfo, SessionMetaInput } from "./types.js";

/** A SessionInfo whose mutable columns a backend updates in place. */
export type SessionRow = { -readonly [K in keyof SessionInfo]: SessionInfo[K] };

export function validateMeta(meta: SessionMetaInput): void {
  if (typeof meta.uid !== "string" || meta.uid === "") {
    throw new HostError(ErrorCode.InvalidArgument, "session uid must be a non-empty string");
  }
  if (meta.forkSeq !== undefined && (!Number.isSafeInteger(meta.forkSeq) || meta.forkSeq < 0)) {
    throw new HostError(ErrorCode.InvalidArgument, `fork seq must be a non-negative integer, got ${meta.forkSeq}`);
  }
}

/** A fresh row for `meta`, created at `nowMs`, with no records and no fence. */
export function rowFromMeta(meta: SessionMetaInput, nowMs: number): SessionRow {
  const row: SessionRow = {
    uid: meta.uid,
    project: meta.project === "" ? "default" : meta.project,
    name: meta.name ?? "",
    harness: meta.harness,
    model: meta.model ?? "",
    parentUid: meta.parentUid ?? "",
    forkSeq: meta.forkSeq ?? 0,
    labels: { ...(meta.labels ?? {}) },
    annotations: { ...(meta.annotations ?? {}) },
    createdAtMs: nowMs,
    updatedAtMs: nowMs,
    lastSeq: 0,
    lastHash: "",
    fence: 0,
    computeState: "NONE" satisfies ComputeStateName,
  };
  if (meta.origin !== undefined) row.origin = clone(OriginSchema, meta.origin);
  if (meta.identity !== undefined) row.identity = clone(IdentityRefSchema, meta.identity);
  return row;
}

/** The row of an imported session before its records: the source's creation time and fence. */
export function importedRow(meta: ImportedSessionMeta): SessionRow {
  validateMeta(meta);
  const row = rowFromMeta(meta, meta.createdAtMs);
  row.fence = meta.fence;
  return row;
}

/** What a write reads of a session and moves (src/journal/plan.ts): its head, its fence and its row's projections. */
export interface SessionTip {
  /** Head seq; 0 for an empty session. */
  readonly seq: number;
  /** Head content hash; "" for an empty session. */
  readonly hash: string;
  /** The session's current fence (0 when none was minted). */
  readonly fence: number;
  readonly computeState: ComputeStateName;
  readonly pin: SessionPin | undefined;
}

/** The tip a session row records. */
export function tipOfRow(row: SessionInfo): SessionTip {
  return { seq: row.lastSeq, hash: row.lastHash, fence: row.fence, computeState: row.computeState, pin: row.pin };
}

/** What a commit moves in a session row: its tip and its update time. */
export interface CommittedColumns extends SessionTip {
  readonly updatedAtMs: number;
}

/** The row `info` becomes once a commit that left `c` behind has landed (every other column is unchanged). */
export function rowAfterCommit(info: SessionInfo, c: CommittedColumns): SessionInfo {
  const row: SessionRow = {
    ...info,
    lastSeq: c.seq,
    lastHash: c.hash,
    fence: c.fence,
    computeState: c.computeState,
    updatedAtMs: c.updatedAtMs,
  };
  setPin(row, c.pin);
  return row;
}

/** Sets (or clears, for undefined) the row's pin. */
export function setPin(row: SessionRow, pin: SessionPin | undefined): void {
  if (pin === undefined) delete row.pin;
  else row.pin = pin;
}

/** The stored pin columns (pin_seq 0: no pin) as a SessionPin. */
export function pinOfColumns(seq: number, harness: string, version: string, digest: string): SessionPin | undefined {
  return seq > 0 ? { harness, version, digest, seq } : undefined;
}

/** Whether two pins differ (the session row's pin columns must be rewritten). */
export function pinChanged(a: SessionPin | undefined, b: SessionPin | undefined): boolean {
  return a?.seq !== b?.seq || a?.harness !== b?.harness || a?.version !== b?.version || a?.digest !== b?.digest;
}

export function byUid(a: { readonly uid: string }, b: { readonly uid: string }): number {
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0;
}
