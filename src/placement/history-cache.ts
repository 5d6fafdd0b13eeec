// A per-session cache of the events a stateless harness's Start.history carries — those after the
// newest compaction's through_seq (docs/protocol.md §16), not the whole session — so a turn on a long
// session neither re-reads nor re-decodes the journal, and a compacted session holds only its window.
// Invariants: the cache only ever serves events base+1..head that chain to the journal's current head
// (checked by hash, from the record at `base` on); anything else is re-read, from `base`, never from
// seq 1. Its entries together hold at most `budgetBytes` of encoded events (least recently used
// sessions are dropped first; a window larger than the budget is served but not kept).
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import type { Head, JournalRecord, RecordLog } from "../journal/types.js";
import { DEFAULT_LIMITS } from "../limits/index.js";
import { ByteLru } from "./byte-lru.js";
import { eventBytes } from "../wire/event-bytes.js";

interface Entry {
  /** Seq of the record before events[0] (the compaction's through_seq; 0: from the first record). */
  base: number;
  /** Seq of the last event held (base when none). */
  seq: number;
  /** content_hash of the record at `seq` ("" at seq 0). */
  hash: string;
  events: Event[];
}

function bytesOf(events: readonly Event[]): number {
  let n = 0;
  for (const e of events) n += eventBytes(e);
  return n;
}

export class HistoryCache {
  private readonly entries: ByteLru<Entry>;

  /** @param budgetBytes encoded event bytes kept over all sessions (limit historyCacheBytes). */
  constructor(budgetBytes = DEFAULT_LIMITS.historyCacheBytes) {
    this.entries = new ByteLru(budgetBytes);
  }

  /** Encoded bytes currently held (for tests and diagnostics). */
  get bytes(): number {
    return this.entries.totalBytes;
  }

  /**
   * Events base+1..head.seq of the session (`base`: the history's start, the newest compaction's
   * through_seq; 0 for every event). The array is the cache's own (it grows as the session does):
   * callers must neither mutate nor retain it past the turn.
   */
  async get(journal: RecordLog, session: string, head: Head, base = 0): Promise<readonly Event[]> {
    if (base > head.seq) throw new RangeError(`history base ${base} is past the head ${head.seq}`);
    let entry = this.usable(session, head, base);
    if (entry && entry.seq === head.seq) return entry.events;
    if (entry) {
      // readRange, not read: one plain loop over the pages, and it records each event's stored size, so
      // the budget does not re-encode what was just decoded.
      const tail = await journal.readRange(session, entry.seq + 1, head.seq);
      if (this.extendWith(session, entry, tail)) return entry.events;
    }
    entry = await this.readWindow(journal, session, head, base);
    this.entries.set(session, entry, bytesOf(entry.events));
    return entry.events;
  }

  /** Extends a cached history with records just committed (no-op unless they chain on). */
  extend(session: string, records: readonly JournalRecord[]): void {
    const entry = this.entries.get(session);
    if (entry) this.extendWith(session, entry, records);
  }

  /**
   * Records read and verified elsewhere (the chain check's): they extend a cached history whose last
   * event the first of them chains onto, and are ignored otherwise (the entry may just be behind).
   */
  offer(session: string, records: readonly JournalRecord[]): void {
    const entry = this.entries.get(session);
    const first = records[0];
    if (entry && first && first.seq === entry.seq + 1 && first.prevHash === entry.hash)
      this.extendWith(session, entry, records);
  }

  forget(session: string): void {
    this.entries.delete(session);
  }

  /**
   * The cached entry if it can serve base+1..head: not past the head, the same record at an equal
   * head, and starting at or before `base` — an entry from before a newer compaction drops the events
   * the compaction replaced (in place), one starting after `base` is useless.
   */
  private usable(session: string, head: Head, base: number): Entry | undefined {
    const entry = this.entries.get(session);
    if (!entry) return undefined;
    if (entry.seq > head.seq || (entry.seq === head.seq && entry.hash !== head.hash) || entry.base > base) {
      this.entries.delete(session);
      return undefined;
    }
    if (entry.base < base) {
      if (base > entry.seq) {
        this.entries.delete(session);
        return undefined;
      }
      const dropped = entry.events.splice(0, base - entry.base);
      entry.base = base;
      this.entries.grow(session, -bytesOf(dropped));
    }
    return entry;
  }

  /** Appends records that chain onto the entry; false (and the entry dropped) when they do not. */
  private extendWith(session: string, entry: Entry, records: readonly JournalRecord[]): boolean {
    let added = 0;
    for (const rec of records) {
      if (rec.seq !== entry.seq + 1 || rec.prevHash !== entry.hash) {
        this.entries.delete(session);
        return false;
      }
      entry.events.push(rec.event);
      entry.seq = rec.seq;
      entry.hash = rec.contentHash;
      added += eventBytes(rec.event);
    }
    this.entries.grow(session, added);
    return true;
  }

  /**
   * Reads base+1..head afresh; the record at `base` (when base > 0) anchors the chain check. An empty
   * window (base at the head) reads nothing: the head anchors it, and the entry is kept all the same, so
   * the records of the next turn extend it (without it, a session's second turn re-read its history).
   */
  private async readWindow(journal: RecordLog, session: string, head: Head, base: number): Promise<Entry> {
    if (head.seq === base) return { base, seq: base, hash: head.hash, events: [] };
    const records = await journal.readRange(session, Math.max(base, 1), head.seq);
    const anchor = base > 0 ? records[0] : undefined;
    const events = (base > 0 ? records.slice(1) : records).map((r) => r.event);
    return { base, seq: head.seq, hash: records.at(-1)?.contentHash ?? anchor?.contentHash ?? "", events };
  }
}
