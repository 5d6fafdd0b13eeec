// The host's metered journal (src/host/metered-journal.ts): it keeps the journal contract (the shared
// suite, on the memory backend), has exactly the optional methods of the journal it wraps, counts each
// commit, and records a commit span only inside a recording trace.
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { meteredJournal } from "../../src/host/metered-journal.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { HostMetrics } from "../../src/obs/metrics.js";
import { startTracing, stopTracing } from "../../src/obs/trace.js";
import { journalConformance } from "../journal/conformance.js";
import { inputEvent } from "../journal/events.js";
import { created } from "../journal/sessions.js";

journalConformance("memory, metered", async () => {
  const journal = meteredJournal(new MemoryJournal(), new HostMetrics());
  return { journal, cleanup: () => journal.close() };
});

const OPTIONAL = ["appendUnderNewFence", "countByComputeState", "tryLockSession", "requestCancel", "onCancelRequest"];

describe("metered journal", () => {
  it("meteredJournalHasExactlyTheOptionalMethodsOfItsJournal", () => {
    const inner = new MemoryJournal();
    const metered = meteredJournal(inner, new HostMetrics());
    for (const name of OPTIONAL) {
      const has = typeof (inner as unknown as Record<string, unknown>)[name] === "function";
      expect(typeof (metered as unknown as Record<string, unknown>)[name] === "function", name).toBe(has);
    }
    const bare: Journal = Object.create(inner) as Journal;
    for (const name of OPTIONAL) Object.defineProperty(bare, name, { value: undefined });
    const meteredBare = meteredJournal(bare, new HostMetrics());
    for (const name of OPTIONAL)
      expect((meteredBare as unknown as Record<string, unknown>)[name], name).toBeUndefined();
  });

  it("everyMethodIsReadThroughTheWrappedJournalsOwnPropertyAccess", async () => {
    // A view that keeps its journal open when closed (test/projection/real-hosts.ts does this): the
    // metered journal must call what the view answers, not the method of the view's target.
    const inner = new MemoryJournal();
    let closes = 0;
    const view: Journal = new Proxy(inner, {
      get(target, prop) {
        if (prop === "close")
          return async () => {
            closes += 1;
          };
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await meteredJournal(view, new HostMetrics()).close();
    expect(closes).toBe(1);
    await expect(inner.getSession("s1")).resolves.toBeUndefined();
  });

  it("everyCommitIsCountedByBackendWithItsRecordsAndBytes", async () => {
    const metrics = new HostMetrics();
    const journal = meteredJournal(await created(new MemoryJournal(), "s1"), metrics);
    const fence = await journal.newFence("s1");
    await journal.append("s1", 0, fence, inputEvent("a"));
    await journal.appendBatch("s1", 1, fence, [inputEvent("b"), inputEvent("c")]);
    await expect(journal.append("s1", 0, fence, inputEvent("late"))).rejects.toMatchObject({ code: "conflict" });
    const text = await metrics.render();
    expect(text).toMatch(/^harnesshost_journal_commit_duration_seconds_count\{backend="memory"\} 2$/m);
    expect(text).toMatch(/^harnesshost_journal_records_appended_total\{backend="memory"\} 3$/m);
    expect(text).toMatch(/^harnesshost_journal_appended_bytes_total\{backend="memory"\} [1-9]\d*$/m);
    expect(text).toMatch(/^harnesshost_fence_conflicts_total\{kind="conflict"\} 1$/m);
  });
});

describe("commit spans", () => {
  const exporter = new InMemorySpanExporter();
  beforeAll(async () => {
    await startTracing({}, { exporter });
  });
  afterAll(async () => {
    await stopTracing();
  });

  it("aCommitOutsideARecordingTraceRecordsNoSpan", async () => {
    exporter.reset();
    const journal = meteredJournal(await created(new MemoryJournal(), "s1"), new HostMetrics());
    const fence = await journal.newFence("s1");
    await journal.append("s1", 0, fence, inputEvent("a"));
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it("aCommitInsideARecordingSpanRecordsOneChildSpanWithItsSeqRange", async () => {
    exporter.reset();
    const journal = meteredJournal(await created(new MemoryJournal(), "s1"), new HostMetrics());
    const fence = await journal.newFence("s1");
    await trace.getTracer("test").startActiveSpan("turn", async (span) => {
      await journal.appendBatch("s1", 0, fence, [inputEvent("a"), inputEvent("b")]);
      await journal.append("s1", 0, fence, inputEvent("stale")).catch(() => undefined);
      span.end();
    });
    const spans = exporter.getFinishedSpans();
    const parent = spans.find((s) => s.name === "turn");
    const commits = spans.filter((s) => s.name === "harnesshost.journal.commit");
    expect(commits).toHaveLength(2);
    for (const c of commits) expect(c.parentSpanContext?.spanId).toBe(parent?.spanContext().spanId);
    expect(commits[0]?.attributes).toMatchObject({
      "harnesshost.session": "s1",
      "harnesshost.journal.backend": "memory",
      "harnesshost.records": 2,
      "harnesshost.seq.from": 1,
      "harnesshost.seq.to": 2,
    });
    expect(commits[1]?.status).toMatchObject({ code: 2, message: "conflict" });
  });
});
