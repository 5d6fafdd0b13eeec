// Chain arithmetic shared by every backend: how a record's hash is minted, what the fork marker is,
// and how a stored chain is re-verified. Invariant: a backend that appends through the write plan
// (plan.ts, the one caller of `chainEvents`) and verifies through `verifyChain` produces and accepts
// exactly the reference's hash chain.
import { create } from "@bufbuild/protobuf";
import { hashRecord } from "../canon/index.js";
import { ErrorCode, HostError } from "../errors/index.js";
import {
  EventKind,
  EventSchema,
  type Event,
  type IdentityRef,
  Lifecycle_Kind,
} from "../gen/agentsessions/v1/common_pb.js";
import type { Head, ImportedSessionMeta, JournalRecord, VerifyResult, VerifiedRecordSink } from "./types.js";

/** The records `events` become when chained onto `head` under `fence`. Throws before anything is written. */
export function chainEvents(head: Head, fence: number, events: readonly Event[]): JournalRecord[] {
  const records: JournalRecord[] = [];
  let prevHash = head.hash;
  let seq = head.seq;
  for (const event of events) {
    seq += 1;
    let contentHash: string;
    try {
      contentHash = hashRecord(prevHash, seq, event);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new HostError(ErrorCode.InvalidArgument, `event for seq ${seq} cannot be canonicalised: ${reason}`, {
        cause: err,
      });
    }
    records.push({ seq, prevHash, contentHash, fence, event });
    prevHash = contentHash;
  }
  return records;
}

/** CAS first, then fence: the order every backend checks an append in. */
export function checkAppend(
  session: string,
  head: Head,
  expectedLastSeq: number,
  fence: number,
  currentFence: number,
): void {
  if (expectedLastSeq !== head.seq) {
    throw new HostError(
      ErrorCode.Conflict,
      `session ${session}: seq conflict (expected last seq ${expectedLastSeq}, head is ${head.seq})`,
    );
  }
  if (fence < currentFence) {
    throw new HostError(ErrorCode.Fenced, `session ${session}: stale fencing token (incarnation superseded)`);
  }
}

export function requireSession(session: string): void {
  if (typeof session !== "string" || session === "") {
    throw new HostError(ErrorCode.InvalidArgument, "session uid must be a non-empty string");
  }
}

export function requireAppendArgs(session: string, expectedLastSeq: number, fence: number): void {
  requireSession(session);
  if (!Number.isSafeInteger(expectedLastSeq) || expectedLastSeq < 0) {
    throw new HostError(
      ErrorCode.InvalidArgument,
      `expected last seq must be a non-negative integer, got ${expectedLastSeq}`,
    );
  }
  if (!Number.isSafeInteger(fence) || fence < 0) {
    throw new HostError(ErrorCode.InvalidArgument, `fence must be a non-negative integer, got ${fence}`);
  }
}

/**
 * The LIFECYCLE_FORK marker appended as the child's seq atSeq+1 (no execution_id, like the reference),
 * naming who forked it as its actor when the host verified one.
 */
export function forkMarkerEvent(atSeq: number, actor?: IdentityRef): Event {
  return create(EventSchema, {
    kind: EventKind.EVENT_LIFECYCLE,
    body: { case: "lifecycle", value: { kind: Lifecycle_Kind.LIFECYCLE_FORK, detail: `parent@${atSeq}` } },
    ...(actor !== undefined ? { actor } : {}),
  });
}

export function requireForkRange(parent: string, atSeq: number, parentHead: Head): void {
  if (!Number.isSafeInteger(atSeq) || atSeq < 1 || atSeq > parentHead.seq) {
    throw new HostError(
      ErrorCode.InvalidArgument,
      `fork point seq ${atSeq} is outside 1..${parentHead.seq} of session ${parent}`,
    );
  }
}

/** A stored record as a verifier sees it: the event is decoded lazily so decode failures are classed apart. */
export interface StoredRecord {
  readonly seq: number;
  readonly prevHash: string;
  readonly contentHash: string;
  readonly fence: number;
  decode(): Event;
}

/**
 * Walks a session's stored records in seq order from genesis and checks dense seqs, prev links and the
 * hash recomputed from the decoded event, then compares the walk's end with the recorded head.
 * `onRecord` receives each record, decoded, once its links and hash have checked out (see Journal.verify).
 */
export async function verifyChain(
  session: string,
  records: AsyncIterable<StoredRecord> | Iterable<StoredRecord>,
  recordedHead: Head,
  onRecord?: VerifiedRecordSink,
): Promise<VerifyResult> {
  const fail = (
    kind: "tampered" | "undecodable" | "gap" | "truncated" | "unreadable",
    seq: number,
    message: string,
  ): VerifyResult => ({
    ok: false,
    session,
    kind,
    seq,
    message: `session ${session}: ${message}`,
  });
  let expected = 1;
  let prev = "";
  const iterator = (Symbol.asyncIterator in records ? records[Symbol.asyncIterator]() : records[Symbol.iterator]()) as
    | AsyncIterator<StoredRecord>
    | Iterator<StoredRecord>;
  for (;;) {
    let step: IteratorResult<StoredRecord>;
    try {
      step = await iterator.next();
    } catch (err) {
      if (!(err instanceof UnreadableStorage)) throw err;
      return fail("unreadable", expected, `the storage holding seq ${expected} cannot be read: ${err.message}`);
    }
    if (step.done) break;
    const rec = step.value;
    if (rec.seq !== expected) {
      return rec.seq > expected
        ? fail("gap", expected, `sequence gap: seq ${expected} is missing (next stored record is seq ${rec.seq})`)
        : fail("tampered", rec.seq, `seq ${rec.seq} is out of order (expected seq ${expected})`);
    }
    if (rec.prevHash !== prev) return fail("tampered", rec.seq, `prev_hash mismatch at seq ${rec.seq}`);
    let event: Event;
    try {
      event = rec.decode();
    } catch (err) {
      return fail("undecodable", rec.seq, `event at seq ${rec.seq} cannot be decoded: ${errorText(err)}`);
    }
    let computed: string;
    try {
      computed = hashRecord(prev, rec.seq, event);
    } catch (err) {
      return fail("undecodable", rec.seq, `event at seq ${rec.seq} cannot be canonicalised: ${errorText(err)}`);
    }
    if (computed !== rec.contentHash) return fail("tampered", rec.seq, `content_hash mismatch at seq ${rec.seq}`);
    onRecord?.({ seq: rec.seq, prevHash: rec.prevHash, contentHash: rec.contentHash, fence: rec.fence, event });
    prev = rec.contentHash;
    expected += 1;
  }
  const count = expected - 1;
  if (count < recordedHead.seq) {
    return fail(
      "truncated",
      count + 1,
      `records end at seq ${count} but the session head is seq ${recordedHead.seq} (seq ${count + 1} is missing)`,
    );
  }
  if (count > recordedHead.seq) {
    return fail(
      "tampered",
      recordedHead.seq + 1,
      `seq ${recordedHead.seq + 1} lies beyond the recorded head seq ${recordedHead.seq}`,
    );
  }
  if (prev !== recordedHead.hash) {
    return fail("tampered", count, `content_hash at seq ${count} does not match the recorded head hash`);
  }
  return { ok: true, session, records: count, head: { seq: count, hash: prev } };
}

/**
 * Thrown by a backend's record iterator when the storage itself cannot be read (a corrupt database
 * page, an I/O error): verifyChain reports it as `unreadable` at the first seq it could not read.
 */
export class UnreadableStorage extends HostError {
  override readonly name = "UnreadableStorage";
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.StorageUnreadable, message, options);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The fields of an imported session row that the source dictates: fence, creation time, dense records. */
export function requireImportable(meta: ImportedSessionMeta, records: readonly JournalRecord[]): void {
  requireSession(meta.uid);
  if (!Number.isSafeInteger(meta.fence) || meta.fence < 0)
    throw new HostError(ErrorCode.InvalidArgument, `session ${meta.uid}: import fence must be a non-negative integer`);
  let prev = "";
  for (const [i, r] of records.entries()) {
    if (r.seq !== i + 1 || r.prevHash !== prev)
      throw new HostError(ErrorCode.InvalidArgument, `session ${meta.uid}: import record ${i + 1} is not chained`);
    if (r.fence > meta.fence)
      throw new HostError(
        ErrorCode.InvalidArgument,
        `session ${meta.uid}: record ${r.seq} has a fence above the session's`,
      );
    prev = r.contentHash;
  }
}
