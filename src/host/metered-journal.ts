// The host's journal with its durable commits measured (docs/operations.md, "Metrics" and "Traces").
// Invariants: every Journal method answers exactly what the wrapped journal answers — same results, same
// errors, same optional methods present or absent — by a direct call (no Proxy, no per-call lookup);
// only the commit methods (append, appendBatch, appendUnderNewFence, fork, forkAll) are measured, each
// with one clock read before and after, a field add on counters bound to the backend once, and — only
// when a span is recording in the caller's trace — one `harnesshost.journal.commit` child span.
import { ErrorCode, isHostError } from "../errors/index.js";
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import type {
  CancelRequest,
  SessionLockCounts,
  CheckpointRow,
  ComputeStateName,
  FencedAppend,
  FencedAppendOptions,
  ForkChild,
  Head,
  ImportedSessionMeta,
  Journal,
  JournalRecord,
  ListSessionsQuery,
  SeqEvent,
  PinnedSession,
  SessionInfo,
  SessionMetaInput,
  SessionPage,
  StorageCapabilities,
  StoredRegistration,
  VerifyResult,
  VerifiedPosition,
  VerifiedRecordSink,
} from "../journal/types.js";
import type { CommitMeter, HostMetrics } from "../obs/metrics.js";
import { recordChildSpan } from "../obs/trace.js";
import { eventBytes } from "../wire/event-bytes.js";

const CONFLICTS: Partial<Record<string, "conflict" | "fenced" | "busy">> = {
  [ErrorCode.Conflict]: "conflict",
  [ErrorCode.Fenced]: "fenced",
  [ErrorCode.SessionBusy]: "busy",
};

const COMMIT_SPAN = "harnesshost.journal.commit";

export class MeteredJournal implements Journal {
  readonly kind: string;
  readonly storage: StorageCapabilities;
  private readonly meter: CommitMeter;

  declare readonly appendUnderNewFence?: (
    session: string,
    expectedLastSeq: number,
    events: readonly Event[],
    opts?: FencedAppendOptions,
  ) => Promise<FencedAppend>;
  declare readonly countByComputeState?: () => Promise<Partial<Record<ComputeStateName, number>>>;
  declare readonly tryLockSession?: (session: string) => Promise<(() => Promise<void>) | undefined>;
  declare readonly sessionLockCounts?: () => SessionLockCounts;
  declare readonly requestCancel?: (session: string, reason: string) => Promise<void>;
  declare readonly onCancelRequest?: (listener: (request: CancelRequest) => void) => Promise<() => Promise<void>>;

  constructor(
    private readonly inner: Journal,
    private readonly metrics: HostMetrics,
  ) {
    this.kind = inner.kind;
    this.storage = inner.storage;
    this.meter = metrics.commitMeter(inner.kind);
    const fenced = inner.appendUnderNewFence;
    if (fenced) {
      this.appendUnderNewFence = (session, expected, events, opts) => {
        const t0 = performance.now();
        return fenced.call(inner, session, expected, events, opts).then(
          (r) => {
            this.committed(session, t0, r.records);
            return r;
          },
          (err: unknown) => {
            throw this.refused(session, t0, err);
          },
        );
      };
    }
    if (inner.countByComputeState) this.countByComputeState = inner.countByComputeState.bind(inner);
    if (inner.tryLockSession) this.tryLockSession = inner.tryLockSession.bind(inner);
    if (inner.sessionLockCounts) this.sessionLockCounts = inner.sessionLockCounts.bind(inner);
    if (inner.requestCancel) this.requestCancel = inner.requestCancel.bind(inner);
    if (inner.onCancelRequest) this.onCancelRequest = inner.onCancelRequest.bind(inner);
  }

  /** Counts one commit (records, their encoded bytes, its latency) and spans it inside a recording trace. */
  private committed(session: string, t0: number, records: readonly JournalRecord[]): void {
    const t1 = performance.now();
    let bytes = 0;
    for (const r of records) bytes += eventBytes(r.event);
    this.meter.committed((t1 - t0) / 1000, records.length, bytes);
    recordChildSpan(COMMIT_SPAN, t0, t1, () => ({
      "harnesshost.session": session,
      "harnesshost.journal.backend": this.kind,
      "harnesshost.records": records.length,
      ...(records.length > 0
        ? { "harnesshost.seq.from": records[0]!.seq, "harnesshost.seq.to": records.at(-1)!.seq }
        : {}),
    }));
  }

  /** `commit` (started at t0) counted and spanned when it settles; one promise added, no async frame. */
  private measured(session: string, t0: number, commit: Promise<JournalRecord[]>): Promise<JournalRecord[]> {
    return commit.then(
      (r) => {
        this.committed(session, t0, r);
        return r;
      },
      (err: unknown) => {
        throw this.refused(session, t0, err);
      },
    );
  }

  /** Counts a refused commit by kind (fence conflicts) and spans it as an error; returns `err`. */
  private refused(session: string, t0: number, err: unknown): unknown {
    const kind = isHostError(err) ? CONFLICTS[err.code] : undefined;
    if (kind) this.metrics.fenceConflict(kind);
    recordChildSpan(
      COMMIT_SPAN,
      t0,
      performance.now(),
      () => ({ "harnesshost.session": session, "harnesshost.journal.backend": this.kind }),
      err,
    );
    return err;
  }

  append(session: string, expectedLastSeq: number, fence: number, event: Event): Promise<JournalRecord> {
    const t0 = performance.now();
    return this.inner.append(session, expectedLastSeq, fence, event).then(
      (r) => {
        this.committed(session, t0, [r]);
        return r;
      },
      (err: unknown) => {
        throw this.refused(session, t0, err);
      },
    );
  }

  appendBatch(
    session: string,
    expectedLastSeq: number,
    fence: number,
    events: readonly Event[],
  ): Promise<JournalRecord[]> {
    const t0 = performance.now();
    return this.measured(session, t0, this.inner.appendBatch(session, expectedLastSeq, fence, events));
  }

  fork(parent: string, child: string, atSeq: number, meta: SessionMetaInput): Promise<JournalRecord[]> {
    const t0 = performance.now();
    return this.measured(parent, t0, this.inner.fork(parent, child, atSeq, meta));
  }

  forkAll(parent: string, atSeq: number, children: readonly ForkChild[]): Promise<JournalRecord[]> {
    const t0 = performance.now();
    return this.measured(parent, t0, this.inner.forkAll(parent, atSeq, children));
  }

  newFence(session: string): Promise<number> {
    return this.inner.newFence(session);
  }
  currentFence(session: string): Promise<number> {
    return this.inner.currentFence(session);
  }
  head(session: string): Promise<Head> {
    return this.inner.head(session);
  }
  read(session: string, from?: number, to?: number): AsyncIterable<JournalRecord> {
    return this.inner.read(session, from, to);
  }
  readRange(session: string, from?: number, to?: number): Promise<JournalRecord[]> {
    return this.inner.readRange(session, from, to);
  }
  readEvents(session: string, from?: number, to?: number): Promise<SeqEvent[]> {
    return this.inner.readEvents(session, from, to);
  }
  recordBytes(session: string, through: number): Promise<number> {
    return this.inner.recordBytes(session, through);
  }
  verify(session: string, onRecord?: VerifiedRecordSink): Promise<VerifyResult> {
    return this.inner.verify(session, onRecord);
  }
  removeEmptySession(uid: string): Promise<boolean> {
    return this.inner.removeEmptySession(uid);
  }
  deleteSession(uid: string): Promise<boolean> {
    return this.inner.deleteSession(uid);
  }
  importSession(meta: ImportedSessionMeta, records: readonly JournalRecord[]): Promise<SessionInfo> {
    return this.inner.importSession(meta, records);
  }
  createSession(meta: SessionMetaInput): Promise<SessionInfo> {
    return this.inner.createSession(meta);
  }
  getSession(uid: string): Promise<SessionInfo | undefined> {
    return this.inner.getSession(uid);
  }
  listSessions(query: ListSessionsQuery): Promise<SessionPage> {
    return this.inner.listSessions(query);
  }
  pinnedSessions(harness: string): Promise<PinnedSession[]> {
    return this.inner.pinnedSessions(harness);
  }

  allSessionUids(): Promise<string[]> {
    return this.inner.allSessionUids();
  }
  putRegistration(reg: StoredRegistration): Promise<void> {
    return this.inner.putRegistration(reg);
  }
  getRegistration(name: string): Promise<StoredRegistration | undefined> {
    return this.inner.getRegistration(name);
  }
  listRegistrations(): Promise<StoredRegistration[]> {
    return this.inner.listRegistrations();
  }
  deleteRegistration(name: string, uid: string): Promise<boolean> {
    return this.inner.deleteRegistration(name, uid);
  }
  putCheckpoint(row: CheckpointRow): Promise<void> {
    return this.inner.putCheckpoint(row);
  }
  latestCheckpoint(session: string): Promise<CheckpointRow | undefined> {
    return this.inner.latestCheckpoint(session);
  }
  putVerifiedPosition(row: VerifiedPosition): Promise<void> {
    return this.inner.putVerifiedPosition(row);
  }
  verifiedPosition(session: string): Promise<VerifiedPosition | undefined> {
    return this.inner.verifiedPosition(session);
  }
  checkpointDigests(): Promise<string[]> {
    return this.inner.checkpointDigests();
  }
  probe(): Promise<void> {
    return this.inner.probe();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
