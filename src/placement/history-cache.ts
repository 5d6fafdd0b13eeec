// A per-session cache of prior events for stateless harnesses, so a turn on a long session does not
// re-read and re-decode the whole journal. Invariants: the cache only ever serves a prefix that chains
// to the journal's current head (checked by hash); anything else is re-read. Its entries together hold
// at most `budgetBytes` of encoded events (least recently used sessions are dropped first; a session
// larger than the budget is served but not kept).
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import type { Head, Journal, JournalRecord } from "../journal/types.js";
import { DEFAULT_LIMITS } from "../limits/index.js";
import { ByteLru } from "./byte-lru.js";
import { eventBytes } from "../wire/event-bytes.js";

interface Entry {
  seq: number;
  hash: string;
  events: Event[];
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
   * Events 1..head.seq of the session. The array is the cache's own (it grows as the session does):
   * callers must neither mutate nor retain it past the turn.
   */
  async get(journal: Journal, session: string, head: Head): Promise<readonly Event[]> {
    let entry = this.entries.get(session);
    if (entry && (entry.seq > head.seq || (entry.seq === head.seq && entry.hash !== head.hash))) entry = undefined;
    if (entry && entry.seq === head.seq) return entry.events;
    if (head.seq === 0) {
      // Keep an empty entry, so the records of the session's first turn extend it and its next turn
      // reads nothing (without it, every session's second turn re-read its whole history).
      const empty: Entry = { seq: 0, hash: "", events: [] };
      this.entries.set(session, empty, 0);
      return empty.events;
    }
    let fresh: Event[] = [];
    let base = entry ?? { seq: 0, hash: "", events: [] };
    let prev = base.hash;
    let ok = true;
    // readRange, not read: one plain loop over the pages, and it records each event's stored size, so
    // the budget below does not re-encode what was just decoded.
    for (const rec of await journal.readRange(session, base.seq + 1, head.seq)) {
      if (rec.prevHash !== prev) {
        ok = false;
        break;
      }
      prev = rec.contentHash;
      fresh.push(rec.event);
    }
    if (!ok) {
      const all = await journal.readRange(session, 1, head.seq);
      base = { seq: 0, hash: "", events: [] };
      fresh = all.map((r) => r.event);
      prev = all.at(-1)?.contentHash ?? "";
    }
    let added = 0;
    for (const e of fresh) {
      base.events.push(e);
      added += eventBytes(e);
    }
    base.seq = head.seq;
    base.hash = prev;
    if (base === entry) this.entries.grow(session, added);
    else this.entries.set(session, base, added);
    return base.events;
  }

  /** Extends a cached history with records just committed (no-op unless they chain on). */
  extend(session: string, records: readonly JournalRecord[]): void {
    const entry = this.entries.get(session);
    if (!entry) return;
    let added = 0;
    for (const rec of records) {
      if (rec.seq !== entry.seq + 1 || rec.prevHash !== entry.hash) {
        this.entries.delete(session);
        return;
      }
      entry.events.push(rec.event);
      entry.seq = rec.seq;
      entry.hash = rec.contentHash;
      added += eventBytes(rec.event);
    }
    this.entries.grow(session, added);
  }

  forget(session: string): void {
    this.entries.delete(session);
  }
}
