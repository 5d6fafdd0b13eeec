// Reads of the PostgreSQL journal's records: keyset pages in seq order and the verify walk. Invariant: a
// session is read one bounded page (READ_PAGE_SIZE) at a time, each page checking first that the
// journal is still open, and a verify reads the head and the records from one snapshot.
import { fromBinary } from "@bufbuild/protobuf";
import type pg from "pg";
import { EventSchema } from "../../gen/agentsessions/v1/common_pb.js";
import { type StoredRecord, verifyChain } from "../chain.js";
import { READ_PAGE_SIZE } from "../paging.js";
import type { Head, VerifiedRecordSink, VerifyResult } from "../types.js";
import { type EventDbRow, int } from "./rows.js";

export type Queryable = Pick<pg.ClientBase, "query">;

const LAST_SEQ_UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** Raw rows in seq order, one bounded keyset query per page, so a long session is never loaded at once. */
export async function* eventRows(
  q: Queryable,
  live: () => void,
  session: string,
  from: number,
  to: number,
): AsyncIterable<EventDbRow> {
  let after = Math.max(1, from) - 1;
  const last = to > 0 ? to : LAST_SEQ_UNBOUNDED;
  while (after < last) {
    live();
    const page = await q.query<EventDbRow>(
      "SELECT seq, prev_hash, content_hash, fence, event FROM events WHERE session = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4",
      [session, after, last, READ_PAGE_SIZE],
    );
    for (const row of page.rows) yield row;
    const tail = page.rows[page.rows.length - 1];
    if (page.rows.length < READ_PAGE_SIZE || tail === undefined) return;
    after = int(tail.seq);
  }
}

/** Journal.verify inside the caller's REPEATABLE READ transaction on `client`. */
export async function verifyIn(
  client: pg.PoolClient,
  live: () => void,
  session: string,
  onRecord?: VerifiedRecordSink,
): Promise<VerifyResult> {
  const pointer = await client.query<{ last_seq: string | null; last_hash: string | null; max_seq: string | null }>(
    `SELECT s.last_seq, s.last_hash, (SELECT MAX(seq) FROM events e WHERE e.session = $1) AS max_seq
     FROM (SELECT 1) one LEFT JOIN sessions s ON s.uid = $1`,
    [session],
  );
  const found = pointer.rows[0];
  const recorded: Head =
    found && found.last_seq !== null ? { seq: int(found.last_seq), hash: found.last_hash ?? "" } : { seq: 0, hash: "" };
  const stray = found && found.max_seq !== null ? int(found.max_seq) : 0;
  if (stray > recorded.seq) {
    return {
      ok: false,
      session,
      kind: "tampered",
      seq: recorded.seq + 1,
      message: `session ${session}: seq ${stray} lies beyond the recorded head seq ${recorded.seq}`,
    };
  }
  const rows = eventRows(client, live, session, 1, Math.max(recorded.seq, 1));
  async function* stored(): AsyncIterable<StoredRecord> {
    for await (const row of rows) {
      yield {
        seq: int(row.seq),
        prevHash: row.prev_hash,
        contentHash: row.content_hash,
        fence: int(row.fence),
        decode: () => fromBinary(EventSchema, row.event),
      };
    }
  }
  return verifyChain(session, stored(), recorded, onRecord);
}
