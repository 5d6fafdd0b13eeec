// Refuses to run on a tampered journal (docs/protocol.md §5.7). Invariant: before an Exec, Resume, Suspend or Fork
// touches a session, every record up to its head has been verified by this process — the whole chain
// on the session's first operation, then only the records appended since the last check — and any
// mismatch is DATA_LOSS naming the first bad seq.
import { hashRecord } from "../canon/index.js";
import { ErrorCode, HostError, isHostError } from "../errors/index.js";
import { UnreadableStorage } from "../journal/chain.js";
import type { Head, Journal } from "../journal/types.js";

function dataLoss(session: string, seq: number, why: string, cause?: unknown): HostError {
  return new HostError(
    ErrorCode.DataLoss,
    `session ${session} failed verification at seq ${seq} (${why}); refusing to run on a tampered journal — run \`harnesshost verify --session ${session}\``,
    cause === undefined ? undefined : { cause },
  );
}

export class ChainCheck {
  private readonly verified = new Map<string, Head>();

  /** @param maxSessions how many sessions' verified heads to remember (oldest forgotten first). */
  constructor(private readonly maxSessions = 100_000) {}

  /** Throws DataLoss unless the session's chain verifies up to its current head; returns that head. */
  async ensure(journal: Journal, session: string): Promise<Head> {
    const head = await journal.head(session);
    const known = this.verified.get(session);
    if (known && known.seq === head.seq && known.hash === head.hash) return head;
    if (known && known.seq < head.seq && (await this.extend(journal, session, known, head))) return head;
    const result = await journal.verify(session);
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
    return result.head;
  }

  /** Verifies records known.seq+1..head.seq chain onto the verified prefix; false to fall back to a full walk. */
  private async extend(journal: Journal, session: string, known: Head, head: Head): Promise<boolean> {
    let prev = known.hash;
    let expected = known.seq + 1;
    try {
      for await (const rec of journal.read(session, known.seq + 1, head.seq)) {
        if (rec.seq !== expected || rec.prevHash !== prev || hashRecord(prev, rec.seq, rec.event) !== rec.contentHash)
          return false;
        prev = rec.contentHash;
        expected += 1;
      }
    } catch (err) {
      if (isHostError(err, ErrorCode.DataLoss)) return false;
      throw err;
    }
    if (expected !== head.seq + 1 || prev !== head.hash) return false;
    this.remember(session, { seq: head.seq, hash: prev });
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
