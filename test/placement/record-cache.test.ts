// RecordCache (src/placement/record-cache.ts) learning records this process committed. Invariant: the
// cache only serves a prefix whose last record matches the journal's head by seq and hash; noted
// records extend it only when they chain onto its last record, and anything else is re-read.
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { EventKind, EventSchema, type Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import type { Journal, JournalRecord } from "../../src/journal/types.js";
import { RecordCache } from "../../src/placement/record-cache.js";
import { countingJournal } from "../fixtures/counting-journal.js";

function input(text: string): Event {
  return create(EventSchema, {
    kind: EventKind.EVENT_INPUT,
    body: { case: "message", value: { role: "user", parts: [{ part: { case: "text", value: { text } } }] } },
  });
}

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
    const { journal, reads } = counting(new MemoryJournal());
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
    const journal = new MemoryJournal();
    const other = new MemoryJournal();
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
    const journal = new MemoryJournal();
    const other = new MemoryJournal();
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
