// The memory journal's stored forms: a record kept as its encoded event, a session as its row and
// records, and the copies handed to callers. Invariant: a caller never gets a stored object — every
// record is decoded afresh and every row copied, so nothing the caller mutates reaches the store.
import { clone, fromBinary } from "@bufbuild/protobuf";
import { EventSchema, IdentityRefSchema, OriginSchema } from "../../gen/agentsessions/v1/common_pb.js";
import { noteEventBytes } from "../../wire/event-bytes.js";
import { decodePageToken, encodePageToken, normalizePageSize, normalizeProject, sessionFilterOf } from "../paging.js";
import type { SessionTip } from "../plan.js";
import { type SessionRow, setPin } from "../session-row.js";
import type { Head, JournalRecord, ListSessionsQuery, SessionInfo, SessionPage } from "../types.js";

export interface StoredEvent {
  readonly seq: number;
  readonly prevHash: string;
  readonly contentHash: string;
  readonly fence: number;
  readonly blob: Uint8Array;
}

export interface MemorySession {
  readonly row: SessionRow;
  readonly records: StoredEvent[];
}

/** One page of Journal.listSessions over `all` rows: newest first, keyset by (created, uid), filtered. */
export function listPage(all: Iterable<SessionRow>, query: ListSessionsQuery): SessionPage {
  const project = normalizeProject(query.project);
  const size = normalizePageSize(query.pageSize);
  const cursor = decodePageToken(query.pageToken);
  const filter = sessionFilterOf(query);
  const rows = [...all]
    .filter(
      (r) =>
        r.project === project &&
        (filter.harness === undefined || r.harness === filter.harness) &&
        (filter.parentUid === undefined || r.parentUid === filter.parentUid) &&
        (filter.states === undefined || filter.states.includes(r.computeState)),
    )
    .filter(
      (r) =>
        !cursor || r.createdAtMs < cursor.createdAtMs || (r.createdAtMs === cursor.createdAtMs && r.uid > cursor.uid),
    )
    .sort((a, b) => b.createdAtMs - a.createdAtMs || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  const page = rows.slice(0, size);
  const last = page[page.length - 1];
  const nextPageToken =
    rows.length > size && last ? encodePageToken({ createdAtMs: last.createdAtMs, uid: last.uid }) : "";
  return { sessions: page.map(infoOf), nextPageToken };
}

export function headOf(row: SessionRow): Head {
  return { seq: row.lastSeq, hash: row.lastHash };
}

/** Moves the row to the tip a write left and stamps its update time. */
export function advance(row: SessionRow, tip: SessionTip): void {
  row.lastSeq = tip.seq;
  row.lastHash = tip.hash;
  row.fence = tip.fence;
  row.computeState = tip.computeState;
  setPin(row, tip.pin);
  row.updatedAtMs = Date.now();
}

export function storedOf(r: JournalRecord, blob: Uint8Array): StoredEvent {
  return { seq: r.seq, prevHash: r.prevHash, contentHash: r.contentHash, fence: r.fence, blob };
}

/** The caller's copy of a record just committed, its encoded length noted (the blob is its encoding). */
export function committedRecordOf(r: JournalRecord, blob: Uint8Array): JournalRecord {
  const record = recordOf(storedOf(r, blob));
  noteEventBytes(record.event, blob);
  return record;
}

export function recordOf(s: StoredEvent): JournalRecord {
  return {
    seq: s.seq,
    prevHash: s.prevHash,
    contentHash: s.contentHash,
    fence: s.fence,
    event: fromBinary(EventSchema, s.blob),
  };
}

export function infoOf(row: SessionRow): SessionInfo {
  const info: SessionRow = { ...row, labels: { ...row.labels }, annotations: { ...row.annotations } };
  if (row.pin !== undefined) info.pin = { ...row.pin };
  if (row.origin !== undefined) info.origin = clone(OriginSchema, row.origin);
  if (row.identity !== undefined) info.identity = clone(IdentityRefSchema, row.identity);
  return info;
}
