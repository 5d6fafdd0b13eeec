// Reads of the SQLite journal's records: collected ranges, events without their chain columns, the pin
// through a seq, and the verify walk. Invariant: a session is read one bounded page (READ_PAGE_SIZE) at
// a time, never loaded at once, and each page first checks that the journal is still open (`live`).
import { fromBinary } from "@bufbuild/protobuf";
import { EventSchema } from "../../gen/agentsessions/v1/common_pb.js";
import { noteEventBytes } from "../../wire/event-bytes.js";
import { type StoredRecord, UnreadableStorage, verifyChain } from "../chain.js";
import { READ_PAGE_SIZE } from "../paging.js";
import { projectPin, type SessionPin } from "../pin.js";
import type { Head, JournalRecord, SeqEvent, VerifiedRecordSink, VerifyResult } from "../types.js";
import { isUnreadable } from "./schema.js";
import { decodeBytes, type EventDbRow, LAST_SEQ_UNBOUNDED, type Statements } from "./statements.js";

/** The journal's statements, after checking that it is still open (throws FailedPrecondition when closed). */
export type LiveStatements = () => Statements;

/** Records from..to (to = 0: to the end), collected page by page in a plain loop. */
export function readRange(live: LiveStatements, session: string, from: number, to: number): JournalRecord[] {
  // better-sqlite3 is synchronous, so the async-generator hop per record would only add overhead to a
  // full-session read.
  const out: JournalRecord[] = [];
  let next = Math.max(1, from);
  const last = to > 0 ? to : LAST_SEQ_UNBOUNDED;
  while (next <= last) {
    const page = live().readPageRaw.all(session, next, last, READ_PAGE_SIZE);
    for (let i = 0; i < page.length; i++) {
      const row = page[i]!;
      const seq = row[0];
      const event = decodeBytes(session, seq, row[4]);
      // readRange fills the host caches, whose budgets count encoded bytes: the stored blob is that size.
      noteEventBytes(event, row[4]);
      out.push({ seq, prevHash: row[1], contentHash: row[2], fence: row[3], event });
    }
    const tail = page[page.length - 1];
    if (page.length < READ_PAGE_SIZE || tail === undefined) break;
    next = tail[0] + 1;
  }
  return out;
}

/** readRange's pages without the chain columns. */
export function readEvents(live: LiveStatements, session: string, from: number, to: number): SeqEvent[] {
  // Replay never reads hashes or fences, and building two 64-character strings per record is most of a
  // read's allocation.
  const out: SeqEvent[] = [];
  let next = Math.max(1, from);
  const last = to > 0 ? to : LAST_SEQ_UNBOUNDED;
  while (next <= last) {
    const page = live().readEventsPageRaw.all(session, next, last, READ_PAGE_SIZE);
    for (let i = 0; i < page.length; i++) {
      const row = page[i]!;
      out.push({ seq: row[0], event: decodeBytes(session, row[0], row[1]) });
    }
    const tail = page[page.length - 1];
    if (page.length < READ_PAGE_SIZE || tail === undefined) break;
    next = tail[0] + 1;
  }
  return out;
}

/** Raw rows in seq order, one bounded query per page, so a long session is never loaded at once. */
export async function* eventRows(
  live: LiveStatements,
  session: string,
  from: number,
  to: number,
): AsyncIterable<EventDbRow> {
  let next = Math.max(1, from);
  const last = to > 0 ? to : LAST_SEQ_UNBOUNDED;
  while (next <= last) {
    const page = live().readPage.all(session, next, last, READ_PAGE_SIZE);
    for (const row of page) yield row;
    const tail = page[page.length - 1];
    if (page.length < READ_PAGE_SIZE || tail === undefined) return;
    next = tail.seq + 1;
  }
}

/** The pin a fork child inherits: the session's records 1..atSeq folded (a fork below the head). */
export function pinThrough(stmts: Statements, session: string, atSeq: number): SessionPin | undefined {
  let pin: SessionPin | undefined;
  let next = 1;
  while (next <= atSeq) {
    const page = stmts.readEventsPageRaw.all(session, next, atSeq, READ_PAGE_SIZE);
    for (const row of page) pin = projectPin(pin, row[0], decodeBytes(session, row[0], row[1]));
    const tail = page[page.length - 1];
    if (page.length < READ_PAGE_SIZE || tail === undefined) break;
    next = tail[0] + 1;
  }
  return pin;
}

/** Journal.verify on SQLite. */
export async function verifySession(
  live: LiveStatements,
  session: string,
  onRecord?: VerifiedRecordSink,
): Promise<VerifyResult> {
  // One statement reads the head pointer and the highest stored seq from the same snapshot, so an
  // append racing this walk is never mistaken for a record past the head.
  let pointer: ReturnType<Statements["headAndMax"]["get"]>;
  try {
    pointer = live().headAndMax.get(session);
  } catch (err) {
    if (!isUnreadable(err)) throw err;
    const message = `session ${session}: its head cannot be read: ${(err as Error).message}`;
    return { ok: false, session, kind: "unreadable", seq: 1, message };
  }
  const recorded: Head = pointer ? { seq: pointer.last_seq, hash: pointer.last_hash } : { seq: 0, hash: "" };
  const stray = pointer ? pointer.max_seq : live().maxSeq.get(session)?.max_seq;
  if (stray !== null && stray !== undefined && stray > recorded.seq) {
    return {
      ok: false,
      session,
      kind: "tampered",
      seq: recorded.seq + 1,
      message: `session ${session}: seq ${stray} lies beyond the recorded head seq ${recorded.seq}`,
    };
  }
  const last = Math.max(recorded.seq, 1);
  const rowsFrom = (from: number, to: number) => eventRows(live, session, from, to);
  // A page of rows that cannot be read is re-read one record at a time, so the first unreadable seq
  // is the one named.
  async function* stored(): AsyncIterable<StoredRecord> {
    let next = 1;
    const asStored = (row: EventDbRow): StoredRecord => ({
      seq: row.seq,
      prevHash: row.prev_hash,
      contentHash: row.content_hash,
      fence: row.fence,
      decode: () => fromBinary(EventSchema, row.event),
    });
    try {
      for await (const row of rowsFrom(1, last)) {
        if (row.seq > recorded.seq) return;
        next = row.seq + 1;
        yield asStored(row);
      }
      return;
    } catch (err) {
      if (!isUnreadable(err)) throw err;
    }
    for (let seq = next; seq <= last; seq++) {
      try {
        for await (const row of rowsFrom(seq, seq)) yield asStored(row);
      } catch (err) {
        if (isUnreadable(err)) throw new UnreadableStorage((err as Error).message);
        throw err;
      }
    }
  }
  return verifyChain(session, stored(), recorded, onRecord);
}
