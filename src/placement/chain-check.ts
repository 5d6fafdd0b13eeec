// Refuses to run on a tampered journal (docs/protocol.md §5.7). Invariant: before an Exec, Resume, Suspend or Fork
// touches a session, every record up to its head has been verified by this process — the whole chain
// on the session's first operation (or, from a stored verified position that checks out, §5.9, the
// records after it), then only the records appended since the last check — and any mismatch is
// DATA_LOSS naming the first bad seq. What a check reads is handed to the caller's sink
// once verified — an incremental check's records (another host's appends), a full walk's records as
// it goes, to be kept only when the walk verified — so the caches need not read them again. One rule
// (`extend`) checks both a tail appended since the last check and the tail after a stored position.
import { hashRecord } from "../canon/index.js";
import { ErrorCode, HostError, isHostError } from "../errors/index.js";
import { UnreadableStorage } from "../journal/chain.js";
import type { Head, Journal, JournalRecord } from "../journal/types.js";
import type { SeedSink, VerifiedPositions, WalkSink } from "./verified-positions.js";

/** At most this many records an incremental check read are handed on; past it the caches read their own. */
const SHARED_RECORDS_MAX = 1024;

/** Where what a check read and verified goes. */
export interface VerifiedSink {
  /** Records an incremental check read and verified, in order, chaining onto the head verified before. */
  verified(records: readonly JournalRecord[]): void;
  /** A full walk is starting: where its records go (undefined: nowhere). */
  walk(): WalkSink | undefined;
  /** A first touch from a stored position: where its projection and tail go (undefined: nowhere). */
  seed?(): SeedSink | undefined;
}

function dataLoss(session: string, seq: number, why: string, cause?: unknown): HostError {
  return new HostError(
    ErrorCode.DataLoss,
    `session ${session} failed verification at seq ${seq} (${why}); refusing to run on a tampered journal — run \`harnesshost verify --session ${session}\``,
    cause === undefined ? undefined : { cause },
  );
}

export class ChainCheck {
  private readonly verified = new Map<string, Head>();

  /**
   * @param positions stored verified positions a first touch may start from (none: always the full walk).
   * @param maxSessions how many sessions' verified heads to remember (oldest forgotten first).
   */
  constructor(
    private readonly positions?: VerifiedPositions,
    private readonly maxSessions = 100_000,
  ) {}

  /** The head this process verified the session through, if it remembers one. */
  verifiedHead(session: string): Head | undefined {
    return this.verified.get(session);
  }

  /**
   * Throws DataLoss unless the session's chain verifies up to its current head; returns that head.
   * `sink.verified` receives the records an incremental check read and verified (records appended
   * since this process last saw the session, at most SHARED_RECORDS_MAX of them); a full walk feeds
   * `sink.walk()`'s records as they verify and calls its `done` only if the whole chain verified.
   * `current` is the session's head when the caller read it already under the session's hold (the
   * session row's last_seq and last_hash): not read again.
   */
  async ensure(journal: Journal, session: string, sink?: VerifiedSink, current?: Head): Promise<Head> {
    const head = current ?? (await journal.head(session));
    const known = this.verified.get(session);
    if (known && known.seq === head.seq && known.hash === head.hash) return head;
    if (known && known.seq < head.seq) {
      // At most head.seq - known.seq records are handed on, so a kept list stays within the cap.
      const read: JournalRecord[] | undefined = sink && head.seq - known.seq <= SHARED_RECORDS_MAX ? [] : undefined;
      if (await this.extend(journal, session, known, head, read && ((rec) => read.push(rec)))) {
        if (read) sink?.verified(read);
        return head;
      }
    }
    if (!known && (await this.fromPosition(journal, session, head, sink))) return head;
    const walk = sink?.walk();
    const result = await journal.verify(session, walk && ((record) => walk.add(record)));
    if (!result.ok) {
      this.verified.delete(session);
      throw dataLoss(
        session,
        result.seq,
        `${result.kind}: ${result.message}`,
        result.kind === "unreadable" ? new UnreadableStorage(result.message) : undefined,
      );
    }
    this.remember(session, result.head);
    walk?.done(result.head);
    return result.head;
  }

  /**
   * A first touch from the session's stored verified position (§5.9): true when the position checked
   * out on its own, its record hashes to it and the records after it chain onto it up to `head` (the
   * seeded fold then reached `head`); false when there is none to use or it was refused.
   */
  private async fromPosition(journal: Journal, session: string, head: Head, sink?: VerifiedSink): Promise<boolean> {
    const start = await this.positions?.start(journal, session, head, sink?.seed?.());
    if (!start) return false;
    const fold = start.sink;
    let chained: boolean;
    try {
      chained = await this.extend(journal, session, start.at, head, fold && ((rec) => fold.add(rec)), true);
    } catch (err) {
      // The full walk that follows reports what is wrong with the records (DATA_LOSS naming the seq).
      start.refuse(`its records cannot be read: ${err instanceof Error ? err.message : String(err)}`);
      return false;
    }
    if (!chained) {
      start.refuse(`its record, or the records after it up to the head seq ${head.seq}, do not chain onto it`);
      return false;
    }
    fold?.done(head);
    start.accept();
    return true;
  }

  /**
   * Verifies that the records after `from` chain onto it up to `head` — dense seqs, prev links and the
   * hash recomputed from each event — handing each to `onRecord` once it checked out, and remembers
   * `head` as verified; false (nothing remembered) on anything else. `anchored`: `from` is a stored
   * position, so its own record is read and checked first (it must carry from.hash and hash to it).
   */
  private async extend(
    journal: Journal,
    session: string,
    from: Head,
    head: Head,
    onRecord?: (record: JournalRecord) => void,
    anchored = false,
  ): Promise<boolean> {
    let prev = from.hash;
    let expected = anchored ? from.seq : from.seq + 1;
    try {
      for await (const rec of journal.read(session, expected, head.seq)) {
        const anchor = anchored && rec.seq === from.seq;
        if (
          rec.seq !== expected ||
          (anchor ? rec.contentHash !== from.hash : rec.prevHash !== prev) ||
          hashRecord(rec.prevHash, rec.seq, rec.event) !== rec.contentHash
        )
          return false;
        if (!anchor) onRecord?.(rec);
        prev = rec.contentHash;
        expected += 1;
      }
    } catch (err) {
      if (isHostError(err, ErrorCode.DataLoss)) return false;
      throw err;
    }
    if (expected !== head.seq + 1 || prev !== head.hash) return false;
    this.remember(session, head);
    return true;
  }

  /** Records this process just appended (hashed by it) extend a verified head without re-reading them. */
  noteAppended(session: string, records: readonly { seq: number; prevHash: string; contentHash: string }[]): void {
    const known = this.verified.get(session);
    if (!known) return;
    let head = known;
    for (const rec of records) {
      if (rec.seq !== head.seq + 1 || rec.prevHash !== head.hash) return;
      head = { seq: rec.seq, hash: rec.contentHash };
    }
    this.remember(session, head);
  }

  private remember(session: string, head: Head): void {
    this.verified.delete(session);
    this.verified.set(session, head);
    if (this.verified.size > this.maxSessions) {
      const oldest = this.verified.keys().next().value;
      if (oldest !== undefined) this.verified.delete(oldest);
    }
  }

  forget(session: string): void {
    this.verified.delete(session);
  }
}
