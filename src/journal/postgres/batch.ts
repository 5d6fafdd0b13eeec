// Group commit on PostgreSQL: a batch of queued appends (commit-queue.ts) written in ONE transaction on
// one connection, validate-then-write. Invariant: the batch locks every session it touches (FOR UPDATE,
// in uid order, so two hosts' batches never deadlock on existing rows), checks each write in arrival
// order against the heads and fences as the writes before it left them — the session exists, CAS, then
// fence, then the chain — and writes only the writes that passed; a write that fails a check fails alone
// and changes nothing. A write to a session with no row is NOT_FOUND: the batch never creates one
// (../plan.ts), so a write that waited on a Delete's row lock finds the session gone. A batch that cannot
// commit as a whole is retried one write per transaction, so a write that breaks the batch at the
// database (a stray row, a deadlock) still fails only itself.
// The optimistic path (`writeBatchOptimistic`) skips the lock round trips for sessions whose head this
// journal remembers: one statement moves each such head only if the stored head, hash and fence are
// still exactly the remembered ones, and inserts only the records of sessions it moved; a session it did
// not move (another host wrote, a fence was minted) is left untouched and goes through the locking path.
import { toBinary } from "@bufbuild/protobuf";
import type pg from "pg";
import { EventSchema } from "../../gen/agentsessions/v1/common_pb.js";
import { noteEventBytes } from "../../wire/event-bytes.js";
import type { QueuedWrite, WriteOutcome } from "../commit-queue.js";
import { parseComputeState } from "../compute-state.js";
import type { SessionPin } from "../pin.js";
import { planAppend, type AppendPlan } from "../plan.js";
import { type HeadDbRow, type Int8, int, PIN_SELECT, pinOfRow } from "./rows.js";
import type { CommittedColumns } from "../session-row.js";
import type { ComputeStateName, JournalRecord } from "../types.js";

/** Rows per INSERT statement. */
const INSERT_CHUNK = 500;

interface SessionState {
  seq: number;
  hash: string;
  fence: number;
  computeState: ComputeStateName;
  /** The pin the records so far leave (src/journal/pin.ts); written with the head. */
  pin: SessionPin | undefined;
  /** The row's update time as stored (moved to the batch's time when a write touches it). */
  updatedAtMs: number;
  /** A write to this session succeeded: its row must be updated. */
  touched: boolean;
}

interface Checkpoint {
  readonly session: string;
  readonly seq: number;
  readonly contentHash: string;
  readonly digest: string;
}

/**
 * Runs `writes` in the transaction `client` has open (BEGIN issued by the caller, COMMIT after): returns
 * each write's outcome; throws on a database error (the caller rolls back; no write is durable then).
 * `mapError` turns a write's own failure into the error its caller sees.
 */
export async function writeBatchIn(
  client: pg.ClientBase,
  writes: readonly QueuedWrite[],
  mapError: (what: string, err: unknown) => unknown,
): Promise<{ outcomes: WriteOutcome[]; heads: Map<string, CachedHead> }> {
  const now = Date.now();
  const uids = [...new Set(writes.map((w) => w.session))].sort();
  const states = await lockSessions(client, uids);
  const outcomes: WriteOutcome[] = [];
  const records: { session: string; record: JournalRecord }[] = [];
  const checkpoints: Checkpoint[] = [];
  for (const w of writes) {
    // Undefined: the session has no row (never created, or deleted); the plan answers NOT_FOUND.
    const state = states.get(w.session);
    try {
      const { fence, records: chained } = applyPlan(state, w);
      collectRows(w, chained, records, checkpoints);
      outcomes.push({ ok: true, fence, records: chained });
    } catch (err) {
      outcomes.push({ ok: false, error: mapError(label(w), err) });
    }
  }
  await insertRecords(client, records);
  await moveHeads(client, states, now);
  await insertCheckpoints(client, checkpoints, now);
  const heads = new Map<string, CachedHead>();
  for (const [uid, st] of states) {
    heads.set(uid, {
      seq: st.seq,
      hash: st.hash,
      fence: st.fence,
      computeState: st.computeState,
      pin: st.pin,
      updatedAtMs: st.touched ? now : st.updatedAtMs,
    });
  }
  return { outcomes, heads };
}

/** A session head as this journal last committed or read it under lock (may be stale: it is only a guess). */
export type CachedHead = CommittedColumns;

/** Remembered heads, bounded (oldest forgotten first). */
export class HeadCache {
  private readonly heads = new Map<string, CachedHead>();
  constructor(private readonly max = 100_000) {}
  get(uid: string): CachedHead | undefined {
    return this.heads.get(uid);
  }
  set(uid: string, head: CachedHead): void {
    this.heads.delete(uid);
    this.heads.set(uid, head);
    if (this.heads.size > this.max) {
      const oldest = this.heads.keys().next().value;
      if (oldest !== undefined) this.heads.delete(oldest);
    }
  }
  delete(uid: string): void {
    this.heads.delete(uid);
  }
}

/**
 * One statement, no explicit transaction: for every session of `writes` whose remembered head lets all
 * its writes pass their checks, moves the stored head if (and only if) it still is the remembered one,
 * and inserts those sessions' records and checkpoint rows. Returns each write's outcome, or undefined
 * for a write left to the locking path (its session was not remembered, a check failed against the
 * remembered head — the stored one decides — or the stored head had moved). Throws when the statement
 * fails; then nothing of it is durable.
 */
export async function writeBatchOptimistic(
  q: Pick<pg.ClientBase, "query">,
  writes: readonly QueuedWrite[],
  cache: HeadCache,
): Promise<(WriteOutcome | undefined)[]> {
  const now = Date.now();
  const states = new Map<string, SessionState & { readonly from: CachedHead }>();
  const refused = new Set<string>();
  const planned: ({ fence: number; records: JournalRecord[] } | undefined)[] = [];
  for (const w of writes) {
    let state = states.get(w.session);
    if (state === undefined && !refused.has(w.session)) {
      const from = cache.get(w.session);
      if (from !== undefined) {
        state = { ...from, from, touched: false };
        states.set(w.session, state);
      }
    }
    if (state === undefined || refused.has(w.session)) {
      refused.add(w.session);
      planned.push(undefined);
      continue;
    }
    try {
      const { fence, records: chained } = applyPlan(state, w);
      planned.push({ fence, records: chained });
    } catch {
      // Judged against a remembered head only: the locking path decides against the stored one.
      refused.add(w.session);
      planned.push(undefined);
    }
  }
  for (const uid of refused) states.delete(uid);
  const moving = [...states].filter(([, s]) => s.touched);
  const records: { session: string; record: JournalRecord }[] = [];
  const checkpoints: Checkpoint[] = [];
  writes.forEach((w, i) => {
    const plan = planned[i];
    if (plan === undefined || !states.has(w.session)) return;
    collectRows(w, plan.records, records, checkpoints);
  });
  if (records.length > INSERT_CHUNK) return writes.map(() => undefined);
  let moved = new Set<string>();
  if (moving.length > 0) {
    const result = await q.query<{ uid: string }>({
      // Named: each connection parses and plans the statement once, not on every commit.
      name: "hh_append_optimistic",
      text: `WITH v AS (
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::bigint[], $8::text[],
             $20::bigint[], $21::text[], $22::text[], $23::text[])
           AS v(uid, exp_seq, exp_hash, exp_fence, seq, hash, fence, state, pin_seq, pin_harness, pin_version, pin_digest)
       ), upd AS (
         UPDATE sessions AS s SET last_seq = v.seq, last_hash = v.hash, fence = v.fence, compute_state = v.state,
           updated_at_ms = $9, pin_seq = v.pin_seq, pin_harness = v.pin_harness, pin_version = v.pin_version,
           pin_digest = v.pin_digest
         FROM v WHERE s.uid = v.uid AND s.last_seq = v.exp_seq AND s.last_hash = v.exp_hash AND s.fence = v.exp_fence
         RETURNING s.uid
       ), ins AS (
         INSERT INTO events (session, seq, prev_hash, content_hash, fence, event)
         SELECT r.session, r.seq, r.prev_hash, r.content_hash, r.fence, r.event
         FROM unnest($10::text[], $11::bigint[], $12::text[], $13::text[], $14::bigint[], $15::bytea[])
           AS r(session, seq, prev_hash, content_hash, fence, event)
         WHERE r.session IN (SELECT uid FROM upd)
         RETURNING 1
       ), cp AS (
         INSERT INTO checkpoints (session, seq, content_hash, digest, created_at_ms)
         SELECT c.s, c.q, c.h, c.d, $9 FROM unnest($16::text[], $17::bigint[], $18::text[], $19::text[]) AS c(s, q, h, d)
         WHERE c.s IN (SELECT uid FROM upd)
         ON CONFLICT (session, seq) DO UPDATE SET content_hash = EXCLUDED.content_hash, digest = EXCLUDED.digest,
           created_at_ms = EXCLUDED.created_at_ms
         RETURNING 1
       )
       SELECT uid FROM upd`,
      values: [
        moving.map(([uid]) => uid),
        moving.map(([, s]) => s.from.seq),
        moving.map(([, s]) => s.from.hash),
        moving.map(([, s]) => s.from.fence),
        moving.map(([, s]) => s.seq),
        moving.map(([, s]) => s.hash),
        moving.map(([, s]) => s.fence),
        moving.map(([, s]) => s.computeState),
        now,
        records.map((r) => r.session),
        records.map((r) => r.record.seq),
        records.map((r) => r.record.prevHash),
        records.map((r) => r.record.contentHash),
        records.map((r) => r.record.fence),
        records.map((r) => noteEventBytes(r.record.event, toBinary(EventSchema, r.record.event))),
        checkpoints.map((c) => c.session),
        checkpoints.map((c) => c.seq),
        checkpoints.map((c) => c.contentHash),
        checkpoints.map((c) => c.digest),
        ...pinArrays(moving.map(([, s]) => s.pin)),
      ],
    });
    moved = new Set(result.rows.map((r) => r.uid));
  }
  for (const [uid, s] of states) {
    // A session with nothing to move (only empty appends) passed its checks against a guess: locking path.
    if (!moved.has(uid)) continue;
    cache.set(uid, {
      seq: s.seq,
      hash: s.hash,
      fence: s.fence,
      computeState: s.computeState,
      pin: s.pin,
      updatedAtMs: now,
    });
  }
  return writes.map((w, i) => {
    const plan = planned[i];
    if (plan === undefined || !moved.has(w.session)) return undefined;
    return { ok: true, ...plan };
  });
}

/**
 * Plans `w` on the session at `state` (CAS, fence, chain: src/journal/plan.ts) and moves `state` to the
 * tip it leaves; a write that mints a fence or appends a record touches the session. Throws (leaving
 * `state` as it was) when a check fails.
 */
function applyPlan(state: SessionState | undefined, w: QueuedWrite): AppendPlan {
  const plan = planAppend(w.session, state, w.expectedLastSeq, w.kind === "fenced" ? "mint" : w.fence, w.events);
  const { after } = plan;
  if (state === undefined) throw new Error(`session ${w.session}: planned without a row`);
  state.seq = after.seq;
  state.hash = after.hash;
  state.fence = after.fence;
  state.computeState = after.computeState;
  state.pin = after.pin;
  if (w.kind === "fenced" || plan.records.length > 0) state.touched = true;
  return plan;
}

/** Adds the rows a planned write inserts: its records and, for a fenced write that asked for one, its checkpoint. */
function collectRows(
  w: QueuedWrite,
  planned: readonly JournalRecord[],
  records: { session: string; record: JournalRecord }[],
  checkpoints: Checkpoint[],
): void {
  for (const r of planned) records.push({ session: w.session, record: r });
  const last = planned[planned.length - 1];
  if (w.kind === "fenced" && w.checkpointDigest !== undefined && last !== undefined) {
    checkpoints.push({ session: w.session, seq: last.seq, contentHash: last.contentHash, digest: w.checkpointDigest });
  }
}

export function label(w: QueuedWrite): string {
  return w.kind === "append" ? `append to session ${w.session}` : `append to session ${w.session} under a new fence`;
}

/** Locks the rows of `uids` and returns their heads; a session with no row has none (it is never created here). */
async function lockSessions(client: pg.ClientBase, uids: readonly string[]): Promise<Map<string, SessionState>> {
  const locked = await client.query<HeadDbRow & { uid: string; updated_at_ms: Int8 }>(
    `SELECT uid, fence, last_seq, last_hash, compute_state, updated_at_ms, ${PIN_SELECT} FROM sessions WHERE uid = ANY($1::text[]) ORDER BY uid FOR UPDATE`,
    [uids],
  );
  const states = new Map<string, SessionState>();
  for (const row of locked.rows) {
    states.set(row.uid, {
      seq: int(row.last_seq),
      hash: row.last_hash,
      fence: int(row.fence),
      computeState: parseComputeState(row.compute_state),
      pin: pinOfRow(row),
      updatedAtMs: int(row.updated_at_ms),
      touched: false,
    });
  }
  return states;
}

async function insertRecords(
  client: pg.ClientBase,
  records: readonly { session: string; record: JournalRecord }[],
): Promise<void> {
  for (let i = 0; i < records.length; i += INSERT_CHUNK) {
    const chunk = records.slice(i, i + INSERT_CHUNK);
    await client.query(
      `INSERT INTO events (session, seq, prev_hash, content_hash, fence, event)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bytea[])`,
      [
        chunk.map((r) => r.session),
        chunk.map((r) => r.record.seq),
        chunk.map((r) => r.record.prevHash),
        chunk.map((r) => r.record.contentHash),
        chunk.map((r) => r.record.fence),
        chunk.map((r) => noteEventBytes(r.record.event, toBinary(EventSchema, r.record.event))),
      ],
    );
  }
}

/** One UPDATE moves every touched session's head, fence and compute state. */
async function moveHeads(client: pg.ClientBase, states: ReadonlyMap<string, SessionState>, now: number): Promise<void> {
  const touched = [...states].filter(([, s]) => s.touched);
  if (touched.length === 0) return;
  await client.query(
    `UPDATE sessions AS s SET last_seq = v.seq, last_hash = v.hash, fence = v.fence, compute_state = v.state,
       updated_at_ms = $6, pin_seq = v.pin_seq, pin_harness = v.pin_harness, pin_version = v.pin_version,
       pin_digest = v.pin_digest
     FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::text[], $7::bigint[], $8::text[], $9::text[],
       $10::text[]) AS v(uid, seq, hash, fence, state, pin_seq, pin_harness, pin_version, pin_digest)
     WHERE s.uid = v.uid`,
    [
      touched.map(([uid]) => uid),
      touched.map(([, s]) => s.seq),
      touched.map(([, s]) => s.hash),
      touched.map(([, s]) => s.fence),
      touched.map(([, s]) => s.computeState),
      now,
      ...pinArrays(touched.map(([, s]) => s.pin)),
    ],
  );
}

/** The pin columns of several sessions, as four parallel arrays (pin_seq 0: no pin). */
function pinArrays(pins: readonly (SessionPin | undefined)[]): [number[], string[], string[], string[]] {
  return [
    pins.map((p) => p?.seq ?? 0),
    pins.map((p) => p?.harness ?? ""),
    pins.map((p) => p?.version ?? ""),
    pins.map((p) => p?.digest ?? ""),
  ];
}

async function insertCheckpoints(client: pg.ClientBase, rows: readonly Checkpoint[], now: number): Promise<void> {
  if (rows.length === 0) return;
  await client.query(
    `INSERT INTO checkpoints (session, seq, content_hash, digest, created_at_ms)
     SELECT s, q, h, d, $5 FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS c(s, q, h, d)
     ON CONFLICT (session, seq) DO UPDATE SET content_hash = EXCLUDED.content_hash, digest = EXCLUDED.digest,
       created_at_ms = EXCLUDED.created_at_ms`,
    [
      rows.map((r) => r.session),
      rows.map((r) => r.seq),
      rows.map((r) => r.contentHash),
      rows.map((r) => r.digest),
      now,
    ],
  );
}
