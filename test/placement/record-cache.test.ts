// RecordCache (src/placement/record-cache.ts) learning records this process committed. Invariant: the
// cache only serves a prefix whose last record matches the journal's head by seq and hash; noted
// records extend it only when they chain onto its last record, and anything else is re-read; a long
// session is kept as its lean projection and the records from its last END, so it stays cached.
import { describe, expect, it } from "vitest";
import type { Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import type { Journal, JournalRecord } from "../../src/journal/types.js";
import { RecordCache } from "../../src/placement/record-cache.js";
import { eventBytes } from "../../src/wire/event-bytes.js";
import { countingJournal } from "../fixtures/counting-journal.js";
import { completedTurnEvents, inputEvent } from "../journal/events.js";
import { created } from "../journal/sessions.js";

/** An INPUT without an execution id (the cache folds any record; these tests read records, not turns). */
const input = (text: string): Event => inputEvent(text, "");

/** The journal with a count of readRange calls. */
function counting(inner: Journal): { journal: Journal; reads: () => number } {
  const { journal, calls } = countingJournal(inner, new Set(["readRange"]));
  return { journal, reads: calls };
}

const seqs = (records: readonly JournalRecord[]) => records.map((r) => r.seq);

/** Every record of the session through the cache's window (its kept records, else the journal). */
async function allOf(cache: RecordCache, journal: Journal, session: string): Promise<readonly JournalRecord[]> {
  const window = await cache.window(journal, session);
  return window.range(1, window.log.head.seq);
}

describe("RecordCache.noteAppended", () => {
  it("records that chain onto the cached tail are served without reading them back", async () => {
    const { journal, reads } = counting(await created(new MemoryJournal(), "s"));
    const cache = new RecordCache();
    await journal.appendBatch("s", 0, 0, [input("a"), input("b")]);
    expect(seqs(await allOf(cache, journal, "s"))).toEqual([1, 2]);
    const before = reads();
    const appended = await journal.appendBatch("s", 2, 0, [input("c")]);
    cache.noteAppended("s", appended);
    const all = await allOf(cache, journal, "s");
    expect(seqs(all)).toEqual([1, 2, 3]);
    expect(all[2]!.contentHash).toBe(appended[0]!.contentHash);
    expect(reads()).toBe(before);
  });

  it("a gap or a foreign chain drops the entry, and the next read returns the journal's records", async () => {
    const journal = await created(new MemoryJournal(), "s");
    const other = await created(new MemoryJournal(), "s");
    const cache = new RecordCache();
    await journal.appendBatch("s", 0, 0, [input("a")]);
    await allOf(cache, journal, "s");
    // Not chained onto seq 1 of "s": a record of another journal's session at seq 2.
    await other.appendBatch("s", 0, 0, [input("x")]);
    const foreign = await other.appendBatch("s", 1, 0, [input("y")]);
    cache.noteAppended("s", foreign);
    const real = await journal.appendBatch("s", 1, 0, [input("b")]);
    const all = await allOf(cache, journal, "s");
    expect(seqs(all)).toEqual([1, 2]);
    expect(all[1]!.contentHash).toBe(real[0]!.contentHash);
  });

  it("noted records whose head the journal does not have are never served", async () => {
    const journal = await created(new MemoryJournal(), "s");
    const other = await created(new MemoryJournal(), "s");
    const cache = new RecordCache();
    await journal.appendBatch("s", 0, 0, [input("a")]);
    await other.appendBatch("s", 0, 0, [input("a")]);
    await allOf(cache, journal, "s");
    // Chains onto the cached record (same first record), but was never committed to `journal`.
    cache.noteAppended("s", await other.appendBatch("s", 1, 0, [input("ghost")]));
    expect(seqs(await allOf(cache, journal, "s"))).toEqual([1]);
    const real = await journal.appendBatch("s", 1, 0, [input("b")]);
    const all = await allOf(cache, journal, "s");
    expect(all.at(-1)!.contentHash).toBe(real[0]!.contentHash);
  });
});

describe("RecordCache on a long session", () => {
  it("aSessionLargerThanTheBudgetStaysCachedAsItsLeanProjectionAndIsNotReRead", async () => {
    const { journal, reads } = counting(await created(new MemoryJournal(), "s"));
    const events = Array.from({ length: 500 }, (_, i) => completedTurnEvents(`e${i}`, "p".repeat(500))).flat();
    const records = await journal.appendBatch("s", 0, 0, events);
    let encoded = 0;
    for (const r of records) encoded += eventBytes(r.event);
    const budget = Math.floor(encoded / 2);
    const cache = new RecordCache(budget);
    const window = await cache.window(journal, "s");
    expect(window.log.head.seq).toBe(2000);
    expect(cache.bytes).toBeGreaterThan(0);
    expect(cache.bytes).toBeLessThanOrEqual(budget);
    const before = reads();
    const appended = await journal.appendBatch("s", 2000, 0, completedTurnEvents("next", "q"));
    cache.noteAppended("s", appended);
    const again = await cache.window(journal, "s");
    expect(reads()).toBe(before);
    expect(again.log.head.seq).toBe(2004);
    expect(again.log.lastEndSeq).toBe(2004);
  });

  it("theWindowKeepsRecordsFromTheLastEndAndServesOlderOnesFromTheJournal", async () => {
    const journal = await created(new MemoryJournal(), "s");
    const events = Array.from({ length: 50 }, (_, i) => completedTurnEvents(`e${i}`, `t${i}`)).flat();
    await journal.appendBatch("s", 0, 0, [...events, ...completedTurnEvents("open", "x").slice(0, 3)]);
    const cache = new RecordCache();
    const window = await cache.window(journal, "s");
    const expected = await journal.readRange("s");
    expect(window.last?.contentHash).toBe(expected.at(-1)?.contentHash);
    expect((await window.record(203))?.contentHash).toBe(expected[202]?.contentHash);
    const old = await window.range(1, 8);
    expect(old.map((r) => r.contentHash)).toEqual(expected.slice(0, 8).map((r) => r.contentHash));
    const tail = await window.range(200, 203);
    expect(tail.map((r) => r.seq)).toEqual([200, 201, 202, 203]);
    expect(await window.record(0)).toBeUndefined();
    expect(await window.record(204)).toBeUndefined();
    // The pending turn's records (from the last END on) are kept; everything before it is not.
    expect(cache.bytes).toBeLessThan(
      window.log.retainedBytes + expected.slice(199).reduce((n, r) => n + eventBytes(r.event), 0) + 1,
    );
  });
});

describe("RecordCache.window with a known head", () => {
  it("aHolderWhoJustReadTheHeadDoesNotHaveItReadAgain", async () => {
    const inner = await created(new MemoryJournal(), "s");
    await inner.appendBatch("s", 0, 0, [input("a"), input("b")]);
    const { journal, calls } = countingJournal(inner, new Set(["head"]));
    const cache = new RecordCache();
    const head = await inner.head("s");
    const window = await cache.window(journal, "s", head);
    expect(calls()).toBe(0);
    expect(window.log.head).toEqual(head);
    expect(seqs(await window.range(1, 2))).toEqual([1, 2]);
    // Without one, the window reads the head itself.
    await cache.window(journal, "s");
    expect(calls()).toBe(1);
  });
});
