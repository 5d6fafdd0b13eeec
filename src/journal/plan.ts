// The one write plan every backend commits: given a session's tip (head, fence and the compute-state and
// pin projections its row keeps) and the events of an append, the chained records and the tip they leave.
// Invariant: this is the only place records are chained and the row projections are advanced for a
// write — memory, SQLite and PostgreSQL (locking and optimistic batches) store what it answers, so every
// backend checks CAS then fence, mints the same hashes and keeps the same row; it is pure and throws
// before anything is written. A session is written only once it exists: a write (or a fence mint) for a
// uid with no row is NOT_FOUND, never an implicit create — rows come only from createSession, fork and
// import (docs/protocol.md §18 rule 8), so a write that raced a Delete cannot bring the session back.
import { ErrorCode, HostError } from "../errors/index.js";
import type { Event, IdentityRef } from "../gen/agentsessions/v1/common_pb.js";
import { chainEvents, checkAppend, forkMarkerEvent } from "./chain.js";
import { projectComputeState } from "./compute-state.js";
import { projectPin, type SessionPin } from "./pin.js";
import { pinChanged, type SessionTip } from "./session-row.js";
import type { JournalRecord } from "./types.js";

export type { SessionTip } from "./session-row.js";

/** The tip of a session just created, with no record and no fence (createSession's row). */
export const EMPTY_TIP: SessionTip = { seq: 0, hash: "", fence: 0, computeState: "NONE", pin: undefined };

/**
 * What a write read of its session under the write's lock (its tip, its row), undefined when the
 * session has no row (never created, or deleted) — then NOT_FOUND, checked before CAS and fence.
 */
export function mustExist<T>(session: string, before: T | undefined): T {
  if (before === undefined) throw new HostError(ErrorCode.NotFound, `session ${session} not found`);
  return before;
}

/** The fence an append writes under: the caller's (checked against the session's), or a fresh one minted. */
export type AppendFence = number | "mint";

export interface AppendPlan {
  /** The records to insert, chained onto the tip in seq order (empty when there were no events). */
  readonly records: JournalRecord[];
  /** The fence the records carry: the caller's, or the one minted (the tip's + 1). */
  readonly fence: number;
  /** The session after the write: the new head, fence, compute state and pin. */
  readonly after: SessionTip;
  /** The pin differs from the tip's: the row's pin columns must be rewritten. */
  readonly pinChanged: boolean;
}

/**
 * Plans appending `events` to `session` whose tip is `tip`: the session must exist (`tip` undefined
 * is NotFound, see mustExist), then CAS (`expectedLastSeq` must be the head, else Conflict), then the
 * fence (a given fence below the session's is Fenced; a minted one never is), then the chain (an event
 * that cannot be canonicalised is InvalidArgument).
 */
export function planAppend(
  session: string,
  tip: SessionTip | undefined,
  expectedLastSeq: number,
  fence: AppendFence,
  events: readonly Event[],
): AppendPlan {
  const before = mustExist(session, tip);
  const minting = fence === "mint";
  checkAppend(session, before, expectedLastSeq, minting ? 0 : fence, minting ? 0 : before.fence);
  const writeFence = minting ? before.fence + 1 : fence;
  const records = chainEvents(before, writeFence, events);
  const after = tipAfter({ ...before, fence: minting ? writeFence : before.fence }, records);
  return { records, fence: writeFence, after, pinChanged: pinChanged(before.pin, after.pin) };
}

/** The fence a fork child starts with: its marker is written under it. */
export const FORK_CHILD_FENCE = 1;

/**
 * Plans a fork child's marker: LIFECYCLE_FORK chained onto the parent's record `atSeq` (content hash
 * `atHash`) under the child's first fence, on a child row that inherits `pin` (the parent's pin there).
 */
export function planForkMarker(
  child: string,
  atSeq: number,
  atHash: string,
  pin: SessionPin | undefined,
  forkedBy?: IdentityRef,
): AppendPlan {
  const base: SessionTip = { seq: atSeq, hash: atHash, fence: FORK_CHILD_FENCE, computeState: "NONE", pin };
  return planAppend(child, base, atSeq, FORK_CHILD_FENCE, [forkMarkerEvent(atSeq, forkedBy)]);
}

/** The plan of storing `records` as they are (an import: chained and checked by the caller) on a session at `before`. */
export function planImport(before: SessionTip, records: readonly JournalRecord[]): AppendPlan {
  const after = tipAfter(before, records);
  return { records: [...records], fence: before.fence, after, pinChanged: pinChanged(before.pin, after.pin) };
}

/** The tip after `records` (already chained, in seq order) land on a session at `before`. */
export function tipAfter(before: SessionTip, records: readonly JournalRecord[]): SessionTip {
  let computeState = before.computeState;
  let pin = before.pin;
  for (const r of records) {
    computeState = projectComputeState(computeState, r.event);
    pin = projectPin(pin, r.seq, r.event);
  }
  const last = records[records.length - 1];
  return last === undefined
    ? { ...before, computeState, pin }
    : { seq: last.seq, hash: last.contentHash, fence: before.fence, computeState, pin };
}
