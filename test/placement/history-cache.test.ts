// HistoryCache (src/placement/history-cache.ts) holds a stateless session's Start.history window —
// the events after the newest compaction's through_seq (docs/protocol.md §16) — and reads from that
// window's start, never from seq 1: a compacted long session costs its window, in memory and in reads.
import { describe, expect, it } from "vitest";
import type { Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { HistoryCache } from "../../src/placement/history-cache.js";
import { eventBytes } from "../../src/wire/event-bytes.js";
import { inputEvent } from "../journal/events.js";
import { created } from "../journal/sessions.js";

/** A memory journal that records every readRange it serves as [from, to]. */
function spiedJournal(): { journal: MemoryJournal; reads: [number, number][] } {
  const journal = new MemoryJournal();
  const reads: [number, number][] = [];
  const read = journal.readRange.bind(journal);
  journal.readRange = async (session: string, from?: number, to?: number) => {
    reads.push([from ?? 1, to ?? Number.POSITIVE_INFINITY]);
    return read(session, from, to);
  };
  return { journal, reads };
}

async function appendInputs(journal: MemoryJournal, session: string, texts: readonly string[]): Promise<void> {
  const head = await (await created(journal, session)).head(session);
  await journal.appendBatch(
    session,
    head.seq,
    0,
    texts.map((t) => inputEvent(t)),
  );
}

const texts = (events: readonly Event[]): string[] =>
  events.map((e) =>
    e.body.case === "message" && e.body.value.parts[0]?.part.case === "text"
      ? e.body.value.parts[0].part.value.text
      : "?",
  );

const bytes = (events: readonly Event[]): number => events.reduce((n, e) => n + eventBytes(e), 0);

describe("HistoryCache", () => {
  it("historyCacheReadsAndHoldsOnlyTheWindowAfterTheCompaction", async () => {
    const { journal, reads } = spiedJournal();
    await appendInputs(journal, "s", ["a", "b", "c", "d", "e", "f"]);
    const cache = new HistoryCache(1 << 20);
    const got = await cache.get(journal, "s", await journal.head("s"), 4);
    expect(texts(got)).toEqual(["e", "f"]);
    // One read, starting at the record the window chains from (seq 4), not at seq 1.
    expect(reads).toEqual([[4, 6]]);
    expect(cache.bytes).toBe(bytes(got));
    // The next turn's records extend the window; the turn after reads only what it has not seen.
    await appendInputs(journal, "s", ["g"]);
    expect(texts(await cache.get(journal, "s", await journal.head("s"), 4))).toEqual(["e", "f", "g"]);
    expect(reads.at(-1)).toEqual([7, 7]);
  });

  it("aNewerCompactionDropsTheEventsItReplacedWithoutARead", async () => {
    const { journal, reads } = spiedJournal();
    await appendInputs(journal, "s", ["a", "b", "c", "d", "e"]);
    const cache = new HistoryCache(1 << 20);
    const all = await cache.get(journal, "s", await journal.head("s"));
    expect(texts(all)).toEqual(["a", "b", "c", "d", "e"]);
    const readsBefore = reads.length;
    const window = await cache.get(journal, "s", await journal.head("s"), 3);
    expect(texts(window)).toEqual(["d", "e"]);
    expect(reads.length).toBe(readsBefore);
    expect(cache.bytes).toBe(bytes(window));
  });

  it("aWindowStartingBeforeTheCachedOneIsReadFromItsOwnStart", async () => {
    const { journal, reads } = spiedJournal();
    await appendInputs(journal, "s", ["a", "b", "c", "d", "e"]);
    const cache = new HistoryCache(1 << 20);
    await cache.get(journal, "s", await journal.head("s"), 3);
    expect(texts(await cache.get(journal, "s", await journal.head("s"), 1))).toEqual(["b", "c", "d", "e"]);
    expect(reads.at(-1)).toEqual([1, 5]);
    // A window that is empty (the compaction reaches the head) still anchors on the head's record.
    const empty = await cache.get(journal, "s", await journal.head("s"), 5);
    expect(empty).toEqual([]);
    await appendInputs(journal, "s", ["f"]);
    expect(texts(await cache.get(journal, "s", await journal.head("s"), 5))).toEqual(["f"]);
    expect(reads.at(-1)).toEqual([6, 6]);
  });

  it("aCachedWindowThatNoLongerChainsToTheHeadIsReadAgainFromTheWindowStart", async () => {
    const { journal, reads } = spiedJournal();
    await appendInputs(journal, "s", ["a", "b", "c", "d"]);
    const cache = new HistoryCache(1 << 20);
    await cache.get(journal, "s", await journal.head("s"), 2);
    // Another journal under the same session name: the head's hash no longer matches the cached one.
    const other = spiedJournal();
    await appendInputs(other.journal, "s", ["w", "x", "y", "z"]);
    expect(texts(await cache.get(other.journal, "s", await other.journal.head("s"), 2))).toEqual(["y", "z"]);
    expect(other.reads).toEqual([[2, 4]]);
    expect(reads).toHaveLength(1);
  });
});
