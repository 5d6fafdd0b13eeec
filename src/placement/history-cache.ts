// A per-session cache of prior events for stateless harnesses, so a turn on a long session does not
// re-read and re-decode the whole journal. Invariant: the cache only ever serves a prefix that chains
// to the journal's current head (checked by hash); anything else is re-read.
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import type { Head, Journal, JournalRecord } from "../journal/types.js";

interface Entry {
  seq: number;
  hash: string;
  events: Event[];
  lastUsed: number;
}

export class HistoryCache {
  private readonly entries = new Map<string, Entry>();
  private tick = 0;

  /** @param maxSessions how many sessions' histories to keep (least recently used are dropped). */
  constructor(private readonly maxSessions = 1024) {}

  /**
   * Events 1..head.seq of the session. The array is the cache's own (it grows as the session does):
   * callers must neither mutate nor retain it past the turn.
   */
  async get(journal: Journal, session: string, head: Head): Promise<readonly Event[]> {
    let entry = this.entries.get(session);
    if (entry && (entry.seq > head.seq || (entry.seq === head.seq && entry.hash !== head.hash))) entry = undefined;
    if (!entry) entry = { seq: 0, hash: "", events: [], lastUsed: 0 };
    if (entry.seq < head.seq) {
      let prev = entry.hash;
      const fresh: Event[] = [];
      let ok = true;
      for await (const rec of journal.read(session, entry.seq + 1, head.seq)) {
        if (rec.prevHash !== prev) {
          ok = false;
          break;
        }
        prev = rec.contentHash;
        fresh.push(rec.event);
      }
      if (!ok) {
        this.entries.delete(session);
        const all = await journal.readRange(session, 1, head.seq);
        entry = { seq: head.seq, hash: all.at(-1)?.contentHash ?? "", events: all.map((r) => r.event), lastUsed: 0 };
      } else {
        for (const e of fresh) entry.events.push(e);
        entry.seq = head.seq;
        entry.hash = prev;
      }
    }
    entry.lastUsed = ++this.tick;
    this.entries.set(session, entry);
    this.evict();
    return entry.events;
  }

  /** Extends a cached history with records just committed (no-op unless they chain on). */
  extend(session: string, records: readonly JournalRecord[]): void {
    const entry = this.entries.get(session);
    if (!entry) return;
    for (const rec of records) {
      if (rec.seq !== entry.seq + 1 || rec.prevHash !== entry.hash) {
        this.entries.delete(session);
        return;
      }
      entry.events.push(rec.event);
      entry.seq = rec.seq;
      entry.hash = rec.contentHash;
    }
  }

  forget(session: string): void {
    this.entries.delete(session);
  }

  private evict(): void {
    if (this.entries.size <= this.maxSessions) return;
    let oldest: string | undefined;
    let min = Infinity;
    for (const [k, v] of this.entries) if (v.lastUsed < min) [oldest, min] = [k, v.lastUsed];
    if (oldest) this.entries.delete(oldest);
  }
}
