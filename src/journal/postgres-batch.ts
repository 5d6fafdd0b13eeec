// Group commit on PostgreSQL: a batch of queued appends (commit-queue.ts) written in ONE transaction on
// one connection, validate-then-write. Invariant: the batch locks every session it touches (FOR UPDATE,
// in uid order, so two hosts' batches never deadlock on existing rows), checks each write in arrival
// order against the heads and fences as the writes before it left them — CAS, then fence, then the
// chain — and writes only the writes that passed; a write that fails a check fails alone and changes
// nothing (a session row the batch created only for it is removed before commit). A batch that cannot
// commit as a whole is retried one write per transaction, so a write that breaks the batch at the
// database (a stray row, a deadlock) still fails only itself.
import { toBinary } from "@bufbuild/protobuf";
import type pg from "pg";
import { EventSchema } from "../gen/agentsessions/v1/common_pb.js";
import { noteEventBytes } from "../wire/event-bytes.js";
import { chainEvents, checkAppend } from "./chain.js";
import type { QueuedWrite, WriteOutcome } from "./commit-queue.js";
import { parseComputeState, projectComputeState } from "./compute-state.js";
import { int, type HeadDbRow } from "./postgres-rows.js";
import type { ComputeStateName, JournalRecord } from "./types.js";

/** Rows per INSERT statement. */
const INSERT_CHUNK = 500;

interface SessionState {
  seq: number;
  hash: string;
  fence: number;
  computeState: ComputeStateName;
  /** The batch inserted the row (an implicit session); removed again if no write to it succeeds. */
  readonly created: boolean;
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
): Promise<WriteOutcome[]> {
  const now = Date.now();
  const uids = [...new Set(writes.map((w) => w.session))].sort();
  const states = await lockSessions(client, uids, now);
  const outcomes: WriteOutcome[] = [];
  const records: { session: string; record: JournalRecord }[] = [];
  const checkpoints: Checkpoint[] = [];
  for (const w of writes) {
    const state = states.get(w.session);
    if (state === undefined) throw new Error(`session ${w.session}: row not locked by the batch`);
    try {
      const head = { seq: state.seq, hash: state.hash };
      const minting = w.kind === "fenced";
      checkAppend(w.session, head, w.expectedLastSeq, minting ? 0 : w.fence, minting ? 0 : state.fence);
      const fence = minting ? state.fence + 1 : w.fence;
      const chained = chainEvents(head, fence, w.events);
      if (minting) state.fence = fence;
      const last = chained[chained.length - 1];
      if (last !== undefined) {
        state.seq = last.seq;
        state.hash = last.contentHash;
        for (const r of chained) {
          state.computeState = projectComputeState(state.computeState, r.event);
          records.push({ session: w.session, record: r });
        }
        if (w.kind === "fenced" && w.checkpointDigest !== undefined) {
          checkpoints.push({
            session: w.session,
            seq: last.seq,
            contentHash: last.contentHash,
            digest: w.checkpointDigest,
          });
        }
      }
      if (minting || last !== undefined) state.touched = true;
      outcomes.push({ ok: true, fence, records: chained });
    } catch (err) {
      outcomes.push({ ok: false, error: mapError(label(w), err) });
    }
  }
  await insertRecords(client, records);
  await moveHeads(client, states, now);
  await insertCheckpoints(client, checkpoints, now);
  const unused = [...states].filter(([, s]) => s.created && !s.touched).map(([uid]) => uid);
  if (unused.length > 0) await client.query("DELETE FROM sessions WHERE uid = ANY($1::text[])", [unused]);
  return outcomes;
}

export function label(w: QueuedWrite): string {
  return w.kind === "append" ? `append to session ${w.session}` : `append to session ${w.session} under a new fence`;
}

/** Locks the rows of `uids` (creating implicit rows for missing ones) and returns their heads. */
async function lockSessions(
  client: pg.ClientBase,
  uids: readonly string[],
  now: number,
): Promise<Map<string, SessionState>> {
  const lock = (which: readonly string[]) =>
    client.query<HeadDbRow & { uid: string }>(
      "SELECT uid, fence, last_seq, last_hash, compute_state FROM sessions WHERE uid = ANY($1::text[]) ORDER BY uid FOR UPDATE",
      [which],
    );
  const states = new Map<string, SessionState>();
  const add = (rows: readonly (HeadDbRow & { uid: string })[], created: ReadonlySet<string>) => {
    for (const row of rows) {
      states.set(row.uid, {
        seq: int(row.last_seq),
        hash: row.last_hash,
        fence: int(row.fence),
        computeState: parseComputeState(row.compute_state),
        created: created.has(row.uid),
        touched: false,
      });
    }
  };
  add((await lock(uids)).rows, new Set());
  const missing = uids.filter((u) => !states.has(u));
  if (missing.length > 0) {
    const inserted = await client.query<{ uid: string }>(
      `INSERT INTO sessions (uid, project, created_at_ms, updated_at_ms)
       SELECT u, 'default', $2, $2 FROM unnest($1::text[]) AS u ON CONFLICT (uid) DO NOTHING RETURNING uid`,
      [missing, now],
    );
    add((await lock(missing)).rows, new Set(inserted.rows.map((r) => r.uid)));
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
       updated_at_ms = $6
     FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::text[]) AS v(uid, seq, hash, fence, state)
     WHERE s.uid = v.uid`,
    [
      touched.map(([uid]) => uid),
      touched.map(([, s]) => s.seq),
      touched.map(([, s]) => s.hash),
      touched.map(([, s]) => s.fence),
      touched.map(([, s]) => s.computeState),
      now,
    ],
  );
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
