// A per-session cache of committed records for placement's whole-session reads (suspend, resume,
// approvals, memory recovery), so those operations cost the records appended since the last one,
// not the session's length. Invariant: the cache only serves a prefix whose last record matches the
// journal's current head by seq and hash and whose new tail chains onto it; anything else is re-read.
import type { Journal, JournalRecord } from "../journal/types.js";

export class RecordCache {
  private readonly entries = new Map<string, JournalRecord[]>();

  /** @param maxSessions how many sessions to keep (least recently used are dropped). */
  constructor(private readonly maxSessions = 256) {}

  /**
   * Every record of the session, 1..head. The array is the cache's own and grows as the session
   * does: callers must neither mutate nor retain it past the operation.
   */
  async all(journal: Journal, session: string): Promise<readonly JournalRecord[]> {
    const head = await journal.head(session);
    let records = this.entries.get(session);
    const last = records?.at(-1);
    if (
      records &&
      (records.length > head.seq ||
        (last !== undefined && last.seq !== records.length) ||
        (records.length === head.seq && (last?.contentHash ?? "") !== head.hash))
    ) {
      records = undefined;
    }
    if (!records) records = [];
    if (records.length < head.seq) {
      const tail = await journal.readRange(session, records.length + 1, head.seq);
      const prev = records.at(-1)?.contentHash ?? "";
      if (tail[0] !== undefined && tail[0].prevHash !== prev) records = await journal.readRange(session, 1, head.seq);
      else for (const rec of tail) records.push(rec);
    }
    this.entries.delete(session);
    this.entries.set(session, records);
    if (this.entries.size > this.maxSessions) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    return records;
  }

  /**
   * Records this process just committed (the journal's own return values) extend a cached session
   * whose last record they chain onto; anything else is left for `all` to re-read.
   */
  noteAppended(session: string, appended: readonly JournalRecord[]): void {
    const records = this.entries.get(session);
    if (!records) return;
    let last = records.at(-1);
    for (const rec of appended) {
      if (rec.seq !== records.length + 1 || rec.prevHash !== (last?.contentHash ?? "")) {
        this.entries.delete(session);
        return;
      }
      records.push(rec);
      last = rec;
    }
  }

  forget(session: string): void {
    this.entries.delete(session);
  }
}
