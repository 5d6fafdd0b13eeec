// The host's journal with its durable commits measured (docs/operations.md, "Metrics" and "Traces").
// Invariants: only the record log's commit methods (append, appendBatch, appendUnderNewFence, fork,
// forkAll) are wrapped, each with one clock read before and after, a field add on counters bound to the
// backend once, and — only when a span is recording in the caller's trace — one
// `harnesshost.journal.commit` child span; every other member is the wrapped journal's own method, bound
// to it once at wrap time (no Proxy, no per-call lookup), so it answers exactly what the journal answers —
// same results, same errors, same optional methods present or absent.
import { ErrorCode, isHostError } from "../errors/index.js";
import type { Journal, JournalRecord, RecordLog } from "../journal/types.js";
import type { CommitMeter, HostMetrics } from "../obs/metrics.js";
import { recordChildSpan } from "../obs/trace.js";
import { eventBytes } from "../wire/event-bytes.js";

const CONFLICTS: Partial<Record<string, "conflict" | "fenced" | "busy">> = {
  [ErrorCode.Conflict]: "conflict",
  [ErrorCode.Fenced]: "fenced",
  [ErrorCode.SessionBusy]: "busy",
};

const COMMIT_SPAN = "harnesshost.journal.commit";

/** The record-log methods that commit: the ones measured. */
type CommitMethods = Pick<RecordLog, "append" | "appendBatch" | "appendUnderNewFence" | "fork" | "forkAll">;

/** `inner` with its commits counted by backend (records, bytes, latency, fence conflicts) and spanned. */
export function meteredJournal(inner: Journal, metrics: HostMetrics): Journal {
  const m = new CommitMeasure(inner.kind, metrics);
  const commits: { -readonly [K in keyof CommitMethods]: CommitMethods[K] } = {
    append: (session, expectedLastSeq, fence, event) => {
      const t0 = performance.now();
      return inner.append(session, expectedLastSeq, fence, event).then(
        (r) => {
          m.committed(session, t0, [r]);
          return r;
        },
        (err: unknown) => {
          throw m.refused(session, t0, err);
        },
      );
    },
    appendBatch: (session, expectedLastSeq, fence, events) => {
      const t0 = performance.now();
      return m.measured(session, t0, inner.appendBatch(session, expectedLastSeq, fence, events));
    },
    fork: (parent, child, atSeq, meta) => {
      const t0 = performance.now();
      return m.measured(parent, t0, inner.fork(parent, child, atSeq, meta));
    },
    forkAll: (parent, atSeq, children) => {
      const t0 = performance.now();
      return m.measured(parent, t0, inner.forkAll(parent, atSeq, children));
    },
  };
  const fenced = inner.appendUnderNewFence;
  if (fenced) {
    commits.appendUnderNewFence = (session, expectedLastSeq, events, opts) => {
      const t0 = performance.now();
      return fenced.call(inner, session, expectedLastSeq, events, opts).then(
        (r) => {
          m.committed(session, t0, r.records);
          return r;
        },
        (err: unknown) => {
          throw m.refused(session, t0, err);
        },
      );
    };
  }
  return { ...boundMethods(inner), kind: inner.kind, storage: inner.storage, ...commits };
}

/**
 * Every method `journal` answers, own or inherited, bound to it. Each is read by property access on
 * `journal` itself — so a journal that is a view (a Proxy) gives what it answers, not its target's
 * method — and read once, here; accessors are not read, and a member shadowed on the way up the
 * prototype chain (an optional method set to undefined) is left out as the journal leaves it out.
 */
function boundMethods(journal: Journal): Journal {
  const out: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (let o: object | null = journal; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (name === "constructor" || seen.has(name)) continue;
      seen.add(name);
      const descriptor = Object.getOwnPropertyDescriptor(o, name);
      if (descriptor === undefined || descriptor.get !== undefined || descriptor.set !== undefined) continue;
      const value: unknown = Reflect.get(journal, name);
      if (typeof value === "function") out[name] = value.bind(journal);
    }
  }
  return out as unknown as Journal;
}

/** One backend's commit counters and spans. */
class CommitMeasure {
  private readonly meter: CommitMeter;

  constructor(
    private readonly kind: string,
    private readonly metrics: HostMetrics,
  ) {
    this.meter = metrics.commitMeter(kind);
  }

  /** Counts one commit (records, their encoded bytes, its latency) and spans it inside a recording trace. */
  committed(session: string, t0: number, records: readonly JournalRecord[]): void {
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
  measured(session: string, t0: number, commit: Promise<JournalRecord[]>): Promise<JournalRecord[]> {
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
  refused(session: string, t0: number, err: unknown): unknown {
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
}
