// A per-session cache of a session's lean log projection and the newest of its records, for
// placement's reads (exec's gate check, suspend, resume, approvals, memory recovery, the Sessions
// view), so those cost the records appended since the last one, not the session's length: the
// projection is folded one record at a time as the session grows and never re-folded, and it keeps
// neither every record nor completed turns' inputs and effects (SessionLog.lean), so a
// million-event session stays cached. Invariants: the cache only serves a projection whose head
// matches the journal's current head by seq and hash and whose new records chain onto it, and that
// projection is exactly the fold of records 1..head; the records it keeps are a contiguous run ending
// at the head (from the last END, at most TAIL_RECORDS), and any other record is read from the journal.
// Its entries together hold at most `budgetBytes` (the projections' retainedBytes estimate plus the
// kept records' encoded bytes; least recently used sessions go first; a larger entry is served but not
// kept).
import { SessionLog } from "../projection/session-log.js";
import type { Head, JournalRecord, RecordLog } from "../journal/types.js";
import { DEFAULT_LIMITS } from "../limits/index.js";
import { ByteLru } from "./byte-lru.js";
import { eventBytes } from "../wire/event-bytes.js";

/** Most records an entry keeps (the newest, from the session's last END on). */
export const TAIL_RECORDS = 1024;
/** Records folded per journal read when a session's projection is built from its start. */
const FOLD_PAGE = 8192;

/**
 * A session's projection through its head, the head record, and any of its records. It is the cache's
 * own and follows the session as records are noted: callers must not retain it past the operation.
 */
export interface RecordWindow {
  readonly log: SessionLog;
  /** The head record (undefined for a session with no records). */
  readonly last: JournalRecord | undefined;
  /** The record at `seq` (1..head), from the kept records or the journal; undefined outside 1..head. */
  record(seq: number): Promise<JournalRecord | undefined>;
  /** Records from..to (clipped to 1..head), in seq order. */
  range(from: number, to: number): Promise<readonly JournalRecord[]>;
}

interface Entry {
  readonly log: SessionLog;
  /** Records tail[0].seq..head, contiguous. */
  tail: JournalRecord[];
  tailBytes: number;
  /** What the entry was last counted at in the LRU. */
  bytes: number;
}

function bytesOf(records: readonly JournalRecord[]): number {
  let n = 0;
  for (const r of records) n += eventBytes(r.event);
  return n;
}

function entryBytes(e: Entry): number {
  return e.log.retainedBytes + e.tailBytes;
}

/** Folds records into the entry and keeps the newest of them (from the last END, at most TAIL_RECORDS). */
function extend(entry: Entry, records: readonly JournalRecord[]): void {
  for (const rec of records) entry.log.apply(rec);
  entry.tail.push(...records);
  entry.tailBytes += bytesOf(records);
  const head = entry.log.head.seq;
  const keepFrom = Math.max(entry.log.lastEndSeq, head - TAIL_RECORDS + 1, 1);
  const first = entry.tail[0]?.seq ?? keepFrom;
  if (first < keepFrom) {
    const dropped = entry.tail.splice(0, keepFrom - first);
    entry.tailBytes -= bytesOf(dropped);
  }
}

class Window implements RecordWindow {
  constructor(
    private readonly journal: RecordLog,
    private readonly session: string,
    private readonly entry: Entry,
  ) {}

  get log(): SessionLog {
    return this.entry.log;
  }

  get last(): JournalRecord | undefined {
    return this.entry.tail.at(-1);
  }

  async record(seq: number): Promise<JournalRecord | undefined> {
    return (await this.range(seq, seq))[0];
  }

  async range(from: number, to: number): Promise<readonly JournalRecord[]> {
    const lo = Math.max(from, 1);
    const hi = Math.min(to, this.entry.log.head.seq);
    if (lo > hi) return [];
    const tail = this.entry.tail;
    const first = tail[0]?.seq;
    if (first !== undefined && lo >= first) return tail.slice(lo - first, hi - first + 1);
    return this.journal.readRange(this.session, lo, hi);
  }
}

export class RecordCache {
  private readonly entries: ByteLru<Entry>;

  /** @param budgetBytes bytes kept over all sessions (limit recordCacheBytes; see the module comment). */
  constructor(budgetBytes = DEFAULT_LIMITS.recordCacheBytes) {
    this.entries = new ByteLru(budgetBytes);
  }

  /** Bytes currently counted (for tests and diagnostics). */
  get bytes(): number {
    return this.entries.totalBytes;
  }

  /**
   * The projection and the records of the session through its head. Safe for readers that do not hold
   * the session. `known`: the head a holder of the session just read (ChainCheck.ensure), so it is not
   * read again; a retry reads it afresh.
   */
  async window(journal: RecordLog, session: string, known?: Head): Promise<RecordWindow> {
    for (let attempt = 0; ; attempt++) {
      const head = attempt === 0 && known ? known : await journal.head(session);
      const cached = this.entries.get(session);
      let entry = cached;
      const at = entry?.log.head;
      if (at && (at.seq > head.seq || (at.seq === head.seq && at.hash !== head.hash))) entry = undefined;
      if (!entry) {
        entry = await this.foldFromJournal(journal, session, head.seq);
      } else if (entry.log.head.seq < head.seq) {
        const from = entry.log.head.seq;
        const tail = await journal.readRange(session, from + 1, head.seq);
        // Another reader or a noted append grew the entry meanwhile: start over from what it holds now.
        if (entry.log.head.seq !== from && attempt < 3) continue;
        if (entry.log.head.seq !== from || (tail[0] !== undefined && tail[0].prevHash !== entry.log.head.hash)) {
          entry = await this.foldFromJournal(journal, session, head.seq);
        } else {
          extend(entry, tail);
        }
      }
      this.count(session, entry, entry === cached);
      return new Window(journal, session, entry);
    }
  }

  /**
   * Records this process just committed (the journal's own return values) extend a cached session
   * whose head they chain onto; anything else is left for `window` to re-read.
   */
  noteAppended(session: string, appended: readonly JournalRecord[]): void {
    const entry = this.entries.get(session);
    if (!entry) return;
    let { seq, hash } = entry.log.head;
    for (const rec of appended) {
      if (rec.seq !== seq + 1 || rec.prevHash !== hash) {
        this.entries.delete(session);
        return;
      }
      seq = rec.seq;
      hash = rec.contentHash;
    }
    extend(entry, appended);
    this.count(session, entry, true);
  }

  /**
   * A projection built from records read elsewhere from seq 1 on (the chain check's full walk), so a
   * session's first operation reads it once: `add` each record in seq order, then `done(head)` keeps
   * the fold as the session's entry if it reached exactly `head` and the cache holds nothing for the
   * session at or past it; a fold never finished is dropped with nothing kept. `from`: a lean log
   * through some seq (a verified position's, §5.9): the records given are those after it.
   */
  fold(
    session: string,
    from: SessionLog = SessionLog.lean(),
  ): { add(record: JournalRecord): void; done(head: Head): void } {
    const entry: Entry = { log: from, tail: [], tailBytes: 0, bytes: 0 };
    let page: JournalRecord[] = [];
    const flush = (): void => {
      if (page.length > 0) extend(entry, page);
      page = [];
    };
    return {
      add: (record) => {
        page.push(record);
        if (page.length >= FOLD_PAGE) flush();
      },
      done: (head) => {
        flush();
        const at = entry.log.head;
        const held = this.entries.get(session)?.log.head;
        if (at.seq !== head.seq || at.hash !== head.hash || (held && held.seq >= head.seq)) return;
        this.count(session, entry, false);
      },
    };
  }

  /** The cached projection of the session, as it is now (no read; undefined when not cached). */
  peek(session: string): SessionLog | undefined {
    return this.entries.get(session)?.log;
  }

  /** Whether the cache holds an entry for the session (whatever its head). */
  holds(session: string): boolean {
    return this.entries.get(session) !== undefined;
  }

  /**
   * Records read and verified elsewhere (the chain check's): they extend a cached session whose head
   * the first of them chains onto, and are ignored otherwise — unlike noteAppended, a mismatch here
   * says nothing about the entry (it may simply be behind), so the entry stays for `window` to extend.
   */
  offer(session: string, records: readonly JournalRecord[]): void {
    const entry = this.entries.get(session);
    const first = records[0];
    if (!entry || !first || first.seq !== entry.log.head.seq + 1 || first.prevHash !== entry.log.head.hash) return;
    this.noteAppended(session, records);
  }

  forget(session: string): void {
    this.entries.delete(session);
  }

  /** Builds the session's projection from its first record, a page at a time (the records are not kept). */
  private async foldFromJournal(journal: RecordLog, session: string, headSeq: number): Promise<Entry> {
    const entry: Entry = { log: SessionLog.lean(), tail: [], tailBytes: 0, bytes: 0 };
    for (let from = 1; from <= headSeq; from += FOLD_PAGE) {
      extend(entry, await journal.readRange(session, from, Math.min(from + FOLD_PAGE - 1, headSeq)));
    }
    return entry;
  }

  /** Counts the entry at its current size (stored anew unless it is the cached one). */
  private count(session: string, entry: Entry, cached: boolean): void {
    const bytes = entryBytes(entry);
    if (cached) this.entries.grow(session, bytes - entry.bytes);
    else this.entries.set(session, entry, bytes);
    entry.bytes = bytes;
  }
}
