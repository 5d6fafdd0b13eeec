// The host's read side: what the edges (the gRPC and HTTP services, the in-process CLI) read of its
// sessions — records, pages of sessions, heads and sizes, verification, checkpoints, exports, the
// journal's health and how it is shared. Invariant: an edge reads sessions only through here, never
// through the journal itself, and each read answers exactly what the host's journal answers (the same
// records in the same order, the same errors), so the way in from an edge is one and the answers did
// not change by passing through it. Writes go through the Placer and the Host, never through here.
import { exportJsonl } from "../journal/transfer/export.js";
import type {
  CheckpointRow,
  Head,
  Journal,
  JournalRecord,
  ListSessionsQuery,
  SessionPage,
  VerifyResult,
} from "../journal/types.js";

export class SessionReads {
  constructor(private readonly journal: Journal) {}

  /** Whether other hosts share this journal (registrations made elsewhere must be followed). */
  get sharedByHosts(): boolean {
    return this.journal.storage.sharedByHosts;
  }

  /** Throws while the journal cannot be read (the health probe). */
  probe(): Promise<void> {
    return this.journal.probe();
  }

  /** A page of sessions in the journal's keyset order. */
  listSessions(query: ListSessionsQuery): Promise<SessionPage> {
    return this.journal.listSessions(query);
  }

  /** The session's last seq and content hash (0 and "" before its first record). */
  head(session: string): Promise<Head> {
    return this.journal.head(session);
  }

  /** The stored bytes of the session's records 1..through (what a fork copies). */
  recordBytes(session: string, through: number): Promise<number> {
    return this.journal.recordBytes(session, through);
  }

  /** The session's records from..to (0: to the head), streamed in seq order. */
  records(session: string, from?: number, to?: number): AsyncIterable<JournalRecord> {
    return this.journal.read(session, from, to);
  }

  /** The session's records from..to, at once (a bounded range). */
  recordRange(session: string, from?: number, to?: number): Promise<JournalRecord[]> {
    return this.journal.readRange(session, from, to);
  }

  /** The session's chain, checked from its first record (§5.7). */
  verify(session: string): Promise<VerifyResult> {
    return this.journal.verify(session);
  }

  /** The session's newest checkpoint row, if any. */
  latestCheckpoint(session: string): Promise<CheckpointRow | undefined> {
    return this.journal.latestCheckpoint(session);
  }

  /** The session's JSON Lines export, one line per record. */
  exportJsonl(session: string): AsyncIterable<string> {
    return exportJsonl(this.journal, session);
  }
}
