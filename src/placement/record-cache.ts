// A per-session cache of committed records and their session-log projection, for placement's reads
// (exec's gate check, suspend, resume, approvals, memory recovery, the Sessions view), so those cost the
// records appended since the last one, not the session's length: the projection is folded one record
// at a time as the window grows and never re-folded. Invariants: the cache only serves a prefix whose
// last record matches the journal's current head by seq and hash and whose new tail chains onto it,
// and its projection is exactly the fold of that prefix; anything else is re-read. Its entries
// together hold at most `budgetBytes` of encoded events (least recently used sessions go first; a
// session larger than the budget is served but not kept).
import { SessionLog } from "../controller/projection.js";
import type { Journal, JournalRecord } from "../journal/types.js";
import { DEFAULT_LIMITS } from "../limits/index.js";
import { ByteLru } from "./byte-lru.js";
import { eventBytes } from "../wire/event-bytes.js";

/** A session's records 1..head with their projection. Callers must neither mutate nor retain them. */
export interface RecordWindow {
  readonly records: readonly JournalRecord[];
  readonly log: SessionLog;
}

interface Entry {
  readonly records: JournalRecord[];
  readonly log: SessionLog;
}

function bytesOf(records: readonly JournalRecord[]): number {
  let n = 0;
  for (const r of records) n += eventBytes(r.event);
  return n;
}

export class RecordCache {
  private readonly entries: ByteLru<Entry>;

  /** @param budgetBytes encoded event bytes kept over all sessions (limit recordCacheBytes). */
  constructor(budgetBytes = DEFAULT_LIMITS.recordCacheBytes) {
    this.entries = new ByteLru(budgetBytes);
  }

  /** Encoded bytes currently held (for tests and diagnostics). */
  get bytes(): number {
    return this.entries.totalBytes;
  }

  /**
   * Every record of the session, 1..head. The array is the cache's own and grows as the session
   * does: callers must neither mutate nor retain it past the operation.
   */
  async all(journal: Journal, session: string): Promise<readonly JournalRecord[]> {
    return (await this.window(journal, session)).records;
  }

  /** The records and their projection (see `all`). Safe for readers that do not hold the session. */
  async window(journal: Journal, session: string): Promise<RecordWindow> {
    for (let attempt = 0; ; attempt++) {
      const head = await journal.head(session);
      const cached = this.entries.get(session);
      let entry = cached;
      const records = entry?.records;
      const last = records?.at(-1);
      if (
        records &&
        (records.length > head.seq ||
          (last !== undefined && last.seq !== records.length) ||
          (records.length === head.seq && (last?.contentHash ?? "") !== head.hash))
      ) {
        entry = undefined;
      }
      entry ??= { records: [], log: new SessionLog() };
      const from = entry.records.length;
      let added = 0;
      if (from < head.seq) {
        const tail = await journal.readRange(session, from + 1, head.seq);
        const prev = entry.records.at(-1)?.contentHash ?? "";
        // Another reader or a noted append grew the entry meanwhile: start over from what it holds now.
        if (entry.records.length !== from && attempt < 3) continue;
        if (entry.records.length !== from || (tail[0] !== undefined && tail[0].prevHash !== prev)) {
          const all = await journal.readRange(session, 1, head.seq);
          entry = { records: all, log: SessionLog.of(all) };
        } else {
          for (const rec of tail) {
            entry.records.push(rec);
            entry.log.apply(rec);
          }
          added = bytesOf(tail);
        }
      }
      if (entry === cached) this.entries.grow(session, added);
      else this.entries.set(session, entry, bytesOf(entry.records));
      return entry;
    }
  }

  /**
   * Records this process just committed (the journal's own return values) extend a cached session
   * whose last record they chain onto; anything else is left for `window` to re-read.
   */
  noteAppended(session: string, appended: readonly JournalRecord[]): void {
    const entry = this.entries.get(session);
    if (!entry) return;
    const { records, log } = entry;
    let last = records.at(-1);
    for (const rec of appended) {
      if (rec.seq !== records.length + 1 || rec.prevHash !== (last?.contentHash ?? "")) {
        this.entries.delete(session);
        return;
      }
      records.push(rec);
      log.apply(rec);
      last = rec;
    }
    this.entries.grow(session, bytesOf(appended));
  }

  forget(session: string): void {
    this.entries.delete(session);
  }
}
