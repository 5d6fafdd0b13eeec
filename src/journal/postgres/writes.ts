// The PostgreSQL journal's writes outside the commit queue — a fork child, an imported session — and
// the error mapping every write shares. Invariant: a fork copies the parent's prefix verbatim and
// writes the child's marker as ../plan.ts plans it, in the caller's transaction; a unique violation or
// a serialization failure is Conflict, never a raw driver error.
import { toBinary } from "@bufbuild/protobuf";
import type pg from "pg";
import { ErrorCode, HostError } from "../../errors/index.js";
import { EventSchema } from "../../gen/agentsessions/v1/common_pb.js";
import { noteEventBytes } from "../../wire/event-bytes.js";
import { requireForkRange } from "../chain.js";
import type { WriteOutcome } from "../commit-queue.js";
import { projectPins, type SessionPin } from "../pin.js";
import { mustExist, FORK_CHILD_FENCE, planForkMarker, type AppendPlan } from "../plan.js";
import { rowFromMeta, type SessionRow, setPin } from "../session-row.js";
import type { Queryable } from "./reads.js";
import type { ForkChild, JournalRecord, SessionMetaInput } from "../types.js";
import {
  decodeEvent,
  type EventDbRow,
  type HeadDbRow,
  int,
  PIN_SELECT,
  pinOfRow,
  SESSION_COLUMNS,
  SESSION_VALUES,
  sessionParams,
} from "./rows.js";
import { isSerializationFailure, isUniqueViolation } from "./schema.js";

/** Rows per INSERT when a batch or fork marker is written. */
const INSERT_CHUNK = 500;

/** Inserts a new session row; AlreadyExists when its uid exists. */
export async function insertSessionRow(q: Queryable, row: SessionRow): Promise<void> {
  const inserted = await q.query(
    `INSERT INTO sessions (${SESSION_COLUMNS}) VALUES (${SESSION_VALUES}) ON CONFLICT (uid) DO NOTHING`,
    sessionParams(row),
  );
  if (inserted.rowCount !== 1) throw new HostError(ErrorCode.AlreadyExists, `session ${row.uid} already exists`);
}

/**
 * Increments and returns the session's fence; NotFound when it has no row (never an implicit create,
 * ../plan.ts). Racing a Delete, the UPDATE waits for the row's lock and then finds it gone.
 */
export async function mintFence(q: Queryable, session: string, now: number): Promise<number> {
  const result = await q.query<{ fence: string }>(
    "UPDATE sessions SET fence = fence + 1, updated_at_ms = $2 WHERE uid = $1 RETURNING fence",
    [session, now],
  );
  return int(mustExist(session, result.rows[0]).fence);
}

/** Removes the session's row if it holds no record; true when removed. */
export async function removeEmptySessionIn(q: Queryable, uid: string): Promise<boolean> {
  const result = await q.query(
    "DELETE FROM sessions WHERE uid = $1 AND last_seq = 0 AND NOT EXISTS (SELECT 1 FROM events WHERE session = $1)",
    [uid],
  );
  return (result.rowCount ?? 0) > 0;
}

/** Every child of a fork (and its checkpoint row, when given), inside the caller's transaction; resolves to their markers. */
export async function forkAllIn(
  client: pg.PoolClient,
  parent: string,
  atSeq: number,
  children: readonly ForkChild[],
): Promise<JournalRecord[]> {
  const markers: JournalRecord[] = [];
  for (const c of children) {
    const marker = await forkIn(client, parent, c.meta.uid, atSeq, c.meta);
    if (c.checkpointDigest !== undefined) {
      await client.query(
        `INSERT INTO checkpoints (session, seq, content_hash, digest, created_at_ms) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (session, seq) DO UPDATE SET content_hash = EXCLUDED.content_hash, digest = EXCLUDED.digest,
           created_at_ms = EXCLUDED.created_at_ms`,
        [c.meta.uid, marker.seq, marker.contentHash, c.checkpointDigest, Date.now()],
      );
    }
    markers.push(marker);
  }
  return markers;
}

/** Removes the session, its records, checkpoint rows and verified position, inside the caller's transaction. */
export async function deleteSessionIn(client: pg.PoolClient, uid: string): Promise<boolean> {
  // The row first: it is what every append locks, so a racing writer waits and then finds no head.
  const removed = await client.query("DELETE FROM sessions WHERE uid = $1", [uid]);
  await client.query("DELETE FROM events WHERE session = $1", [uid]);
  await client.query("DELETE FROM checkpoints WHERE session = $1", [uid]);
  await client.query("DELETE FROM verified_positions WHERE session = $1", [uid]);
  return (removed.rowCount ?? 0) > 0;
}

/** One child of a fork, inside the caller's transaction; resolves to the child's fork marker. */
export async function forkIn(
  client: pg.PoolClient,
  parent: string,
  child: string,
  atSeq: number,
  meta: SessionMetaInput,
): Promise<JournalRecord> {
  const source = await client.query<HeadDbRow>(
    `SELECT fence, last_seq, last_hash, compute_state, ${PIN_SELECT} FROM sessions WHERE uid = $1 FOR SHARE`,
    [parent],
  );
  const parentRow = source.rows[0];
  if (!parentRow) throw new HostError(ErrorCode.NotFound, `session ${parent} not found`);
  requireForkRange(parent, atSeq, { seq: int(parentRow.last_seq), hash: parentRow.last_hash });
  const now = Date.now();
  const row = rowFromMeta({ ...meta, uid: child, parentUid: meta.parentUid ?? parent, forkSeq: atSeq }, now);
  const inherited = atSeq === int(parentRow.last_seq) ? pinOfRow(parentRow) : await pinThrough(client, parent, atSeq);
  row.fence = FORK_CHILD_FENCE;
  setPin(row, inherited);
  await insertSessionRow(client, row);
  const forkPoint = await client.query<{ content_hash: string }>(
    "SELECT content_hash FROM events WHERE session = $1 AND seq = $2",
    [parent, atSeq],
  );
  const pointHash = forkPoint.rows[0]?.content_hash;
  if (pointHash === undefined)
    throw new HostError(ErrorCode.DataLoss, `session ${parent}: record seq ${atSeq} is missing`);
  const copied = await client.query(
    `INSERT INTO events (session, seq, prev_hash, content_hash, fence, event)
     SELECT $1, seq, prev_hash, content_hash, fence, event FROM events WHERE session = $2 AND seq <= $3`,
    [child, parent, atSeq],
  );
  if (copied.rowCount !== atSeq) {
    throw new HostError(
      ErrorCode.DataLoss,
      `session ${parent}: expected ${atSeq} records to fork, found ${copied.rowCount ?? 0}`,
    );
  }
  const plan = planForkMarker(child, atSeq, pointHash, inherited, meta.forkedBy);
  await insertPlanned(client, child, plan, now);
  const [record] = plan.records;
  if (record === undefined) throw new Error("fork marker was not chained");
  return record;
}

/** Inserts a plan's records (in bounded multi-row statements) and moves the session row to the tip it leaves. */
export async function insertPlanned(
  client: pg.PoolClient,
  session: string,
  plan: AppendPlan,
  now: number,
): Promise<void> {
  const { records, after } = plan;
  for (let i = 0; i < records.length; i += INSERT_CHUNK) {
    const chunk = records.slice(i, i + INSERT_CHUNK);
    await client.query(
      `INSERT INTO events (session, seq, prev_hash, content_hash, fence, event)
       SELECT $1::text, r.seq, r.prev_hash, r.content_hash, r.fence, r.event
       FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bytea[]) AS r(seq, prev_hash, content_hash, fence, event)`,
      [
        session,
        chunk.map((r) => r.seq),
        chunk.map((r) => r.prevHash),
        chunk.map((r) => r.contentHash),
        chunk.map((r) => r.fence),
        chunk.map((r) => noteEventBytes(r.event, toBinary(EventSchema, r.event))),
      ],
    );
  }
  if (records.length === 0) return;
  await client.query(
    `UPDATE sessions SET last_seq = $1, last_hash = $2, compute_state = $3, updated_at_ms = $4, pin_seq = $6,
       pin_harness = $7, pin_version = $8, pin_digest = $9 WHERE uid = $5`,
    [
      after.seq,
      after.hash,
      after.computeState,
      now,
      session,
      after.pin?.seq ?? 0,
      after.pin?.harness ?? "",
      after.pin?.version ?? "",
      after.pin?.digest ?? "",
    ],
  );
}

/** The pin a fork child inherits below the parent's head: the parent's records 1..atSeq folded. */
async function pinThrough(client: pg.PoolClient, parent: string, atSeq: number): Promise<SessionPin | undefined> {
  const result = await client.query<EventDbRow>(
    "SELECT seq, prev_hash, content_hash, fence, event FROM events WHERE session = $1 AND seq <= $2 ORDER BY seq",
    [parent, atSeq],
  );
  return projectPins(
    undefined,
    result.rows.map((r) => ({ seq: int(r.seq), event: decodeEvent(parent, r) })),
  );
}

export function unwrap(outcomes: readonly WriteOutcome[]): { fence: number; records: JournalRecord[] } {
  const [outcome] = outcomes;
  if (outcome === undefined) throw new Error("a write committed without an outcome");
  if (!outcome.ok) throw outcome.error;
  return { fence: outcome.fence, records: outcome.records };
}

export function mapWriteError(what: string, err: unknown): unknown {
  if (err instanceof HostError) return err;
  if (isUniqueViolation(err)) {
    return new HostError(ErrorCode.Conflict, `${what}: seq conflict (a concurrent writer committed first)`, {
      cause: err,
    });
  }
  if (isSerializationFailure(err)) {
    return new HostError(ErrorCode.Conflict, `${what}: lost a serialization race with a concurrent writer`, {
      cause: err,
    });
  }
  return err;
}
