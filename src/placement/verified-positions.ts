// A session's first touch in O(tail) (docs/protocol.md §5.9). Invariants: a stored verified position
// is used only when its digest matches, its seq is within the session and its projection decodes at
// exactly its seq and hash (checked here), and the record at its seq hashes to the stored hash and the
// records after it chain onto it up to the head (checked by ChainCheck, the one tail walk); then the
// projection stored with it, folded on over exactly those records, is what the record cache serves.
// Anything else refuses the position — logged at warn and counted — and the caller walks the whole
// chain, so nothing is ever served from a position that does not match its records. A session shorter
// than `everyRecords` has none stored, so its position is not even read. A position is stored only at
// a natural point (the head is an END or a SUSPEND) from a projection whose head the chain check
// verified, at most once per `everyRecords` records (more apart for a large projection:
// VERIFIED_POSITION_BYTES_PER_RECORD), its write off the operation's path; a store that fails or never
// happens (a crash) costs the next first touch a longer tail, nothing else.
import { decodeProjection, encodeProjection } from "../projection/codec.js";
import type { SessionLog } from "../projection/session-log.js";
import { verifiedPositionDigest } from "../journal/verified-position.js";
import type { Head, Journal, JournalRecord, VerifiedPosition } from "../journal/types.js";
import type { HostMetrics } from "../obs/metrics.js";
import type { Log } from "../obs/log.js";

/** Records between two stored positions of a session, at least (see docs/operations.md). */
export const VERIFIED_POSITION_EVERY_RECORDS = 256;
/**
 * Stored projection bytes per record appended, at most: a session whose last stored projection was B
 * bytes stores its next position B / this records later, if that is more than everyRecords, so the cost
 * of encoding and writing positions stays a bounded share of an append however long the session grows.
 */
export const VERIFIED_POSITION_BYTES_PER_RECORD = 2048;

/** How many sessions' stored seqs are remembered (oldest forgotten first: the next store is then due). */
const REMEMBERED = 100_000;

export interface VerifiedPositionOptions {
  /** false: never read a stored position, every first touch walks the whole chain (default true). */
  readonly trust?: boolean;
  /** Records between two stored positions of a session, at least (default VERIFIED_POSITION_EVERY_RECORDS). */
  readonly everyRecords?: number;
}

/**
 * Records in seq order as they verify (a full walk's, or those after a position); `done` only when
 * the chain verified up to `head`.
 */
export interface WalkSink {
  add(record: JournalRecord): void;
  done(head: Head): void;
}

/** Where a position's projection goes once it verified: a fold seeded with it (undefined: not wanted). */
export type SeedSink = (log: SessionLog) => WalkSink | undefined;

/**
 * A stored position that checked out on its own: the chain check verifies its record and the records
 * after it (`at` is its seq and hash), feeds them to `sink`, then calls `accept` — or `refuse` with
 * the reason, and walks the whole chain.
 */
export interface PositionStart {
  readonly at: Head;
  readonly sink: WalkSink | undefined;
  accept(): void;
  refuse(why: string): void;
}

export class VerifiedPositions {
  readonly trust: boolean;
  private readonly every: number;
  /** Per session, the seq of the position known stored (read or written by this process) and its size. */
  private readonly stored = new Map<string, { seq: number; bytes: number }>();
  private readonly writes = new Set<Promise<void>>();

  constructor(
    opts: VerifiedPositionOptions,
    private readonly log: Log,
    private readonly metrics: HostMetrics | undefined,
  ) {
    this.trust = opts.trust ?? true;
    this.every = Math.max(1, opts.everyRecords ?? VERIFIED_POSITION_EVERY_RECORDS);
  }

  /**
   * Where the first touch of `session` may start: its stored position once the position checked out
   * on its own — digest, seq within 1..head, projection decoded at exactly that seq and hash, and then
   * seeded into `seed`'s fold — for the chain check to verify its record and the records after it
   * (ChainCheck, which calls `accept` or `refuse`). Undefined when there is none to use: distrusted, a
   * session shorter than `everyRecords` (none is stored before that many records: not even read), none
   * stored, or refused here.
   */
  async start(
    journal: Journal,
    session: string,
    head: Head,
    seed: SeedSink | undefined,
  ): Promise<PositionStart | undefined> {
    if (!this.trust || head.seq < this.every) return undefined;
    const row = await journal.verifiedPosition(session);
    if (!row) return undefined;
    const refuse = (why: string): void => {
      this.stored.delete(session);
      this.metrics?.verifiedPosition("refused");
      this.log.warn(
        { session, seq: row.seq, head_seq: head.seq, reason: why },
        "stored verified position refused; walking the whole chain",
      );
    };
    const checked = this.check(session, head, row, seed);
    if (typeof checked === "string") {
      refuse(checked);
      return undefined;
    }
    return {
      at: { seq: row.seq, hash: row.hash },
      sink: checked.sink,
      accept: () => {
        this.remember(session, row.seq, row.projection.byteLength);
        this.metrics?.verifiedPosition("used");
      },
      refuse,
    };
  }

  /** Why the position cannot be used on its own (a string), or the fold seeded with its projection. */
  private check(
    session: string,
    head: Head,
    row: VerifiedPosition,
    seed: SeedSink | undefined,
  ): { sink: WalkSink | undefined } | string {
    if (row.session !== session) return `the row names session ${row.session}`;
    if (!Number.isSafeInteger(row.seq) || row.seq < 1 || row.seq > head.seq)
      return `its seq ${row.seq} is outside 1..${head.seq}`;
    if (verifiedPositionDigest(session, row.seq, row.hash, row.projection) !== row.digest)
      return "its digest does not match its seq, hash and projection";
    if (!seed) return { sink: undefined };
    let log: SessionLog;
    try {
      log = decodeProjection(row.projection);
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
    if (log.head.seq !== row.seq || log.head.hash !== row.hash || log.length !== row.seq)
      return `its projection is at seq ${log.head.seq} (${log.length} records), not at the position`;
    return { sink: seed(log) };
  }

  /**
   * After an operation: stores the session's position if the projection's head is a natural point,
   * verified (`verified`: the chain check's head), and `everyRecords` past the last one stored. The
   * projection is encoded now (it changes as the session grows); the write runs in the background.
   */
  afterOperation(journal: Journal, session: string, log: SessionLog | undefined, verified: Head | undefined): void {
    if (!log || !verified) return;
    const head = log.head;
    if (head.seq === 0 || head.seq !== verified.seq || head.hash !== verified.hash) return;
    if (log.lastEndSeq !== head.seq && log.lastOwnSuspend?.seq !== head.seq) return;
    const last = this.stored.get(session);
    const every = Math.max(this.every, Math.ceil((last?.bytes ?? 0) / VERIFIED_POSITION_BYTES_PER_RECORD));
    if (head.seq - (last?.seq ?? 0) < every) return;
    const projection = encodeProjection(log as SessionLog<JournalRecord>);
    if (!projection) return;
    this.remember(session, head.seq, projection.byteLength);
    const createdAtMs = Date.now();
    // The digest and the write on the next turn of the event loop: a synchronous backend (SQLite)
    // would otherwise write and fsync before the operation's reply.
    const write = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() =>
        journal.putVerifiedPosition({
          session,
          seq: head.seq,
          hash: head.hash,
          projection,
          digest: verifiedPositionDigest(session, head.seq, head.hash, projection),
          createdAtMs,
        }),
      )
      .then(
        () => this.metrics?.verifiedPosition("stored"),
        (err: unknown) => {
          if (this.stored.get(session)?.seq === head.seq) this.stored.delete(session);
          this.metrics?.verifiedPosition("store_failed");
          this.log.warn(
            { session, seq: head.seq, err: err instanceof Error ? err.message : String(err) },
            "storing a verified position failed (the next first touch verifies a longer tail)",
          );
        },
      );
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
  }

  /** Resolves once every store started so far has finished (or failed). */
  async idle(): Promise<void> {
    while (this.writes.size > 0) await Promise.all([...this.writes]);
  }

  forget(session: string): void {
    this.stored.delete(session);
  }

  private remember(session: string, seq: number, bytes: number): void {
    this.stored.delete(session);
    this.stored.set(session, { seq, bytes });
    if (this.stored.size > REMEMBERED) this.stored.delete(this.stored.keys().next().value!);
  }
}
