// What several backends answer the same way from their own streaming read, written once. Invariant:
// readRange and readEvents answer exactly what `read` yields, in its order; an append of one event
// answers the one record its commit wrote (never nothing).
import type { JournalRecord, SeqEvent } from "./types.js";

/** Every record `read` yields, in order. */
export async function collectRecords(read: AsyncIterable<JournalRecord>): Promise<JournalRecord[]> {
  const out: JournalRecord[] = [];
  for await (const rec of read) out.push(rec);
  return out;
}

/** Every record `read` yields as (seq, event), in order. */
export async function collectEvents(read: AsyncIterable<JournalRecord>): Promise<SeqEvent[]> {
  const out: SeqEvent[] = [];
  for await (const rec of read) out.push({ seq: rec.seq, event: rec.event });
  return out;
}

/** The record a one-event commit wrote. */
export function onlyRecord(records: readonly JournalRecord[]): JournalRecord {
  const [record] = records;
  if (record === undefined) throw new Error("append committed no record");
  return record;
}
