// HistoryCache (src/placement/history-cache.ts): a stateless session's prior events are read from the
// journal once and then extended by the records this process commits. Invariant: a session's history is
// cached from its first turn on, so no turn after the first reads the journal while the entry stays.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { EventKind, EventSchema, type Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import { MemoryJournal } from "../../src/journal/memory.js";
import { HistoryCache } from "../../src/placement/history-cache.js";
import { countingJournal } from "../fixtures/counting-journal.js";

function input(text: string): Event {
  return create(EventSchema, {
    kind: EventKind.EVENT_INPUT,
    body: { case: "message", value: { role: "user", parts: [{ part: { case: "text", value: { text } } }] } },
  });
}

describe("HistoryCache", () => {
  it("aNewSessionsHistoryIsCachedFromItsFirstTurn", async () => {
    const { journal, calls } = countingJournal(new MemoryJournal(), new Set(["readRange", "read"]));
    const cache = new HistoryCache();
    const fence = await journal.newFence("s1");
    // The first turn: nothing prior.
    expect(await cache.get(journal, "s1", await journal.head("s1"))).toEqual([]);
    const first = await journal.appendBatch("s1", 0, fence, [input("a"), input("b")]);
    cache.extend("s1", first);
    // The second turn gets the first turn's events without reading them back.
    const history = await cache.get(journal, "s1", await journal.head("s1"));
    expect(history.map((e) => e.body.case === "message" && e.body.value.parts[0]?.part.value)).toEqual([
      expect.objectContaining({ text: "a" }),
      expect.objectContaining({ text: "b" }),
    ]);
    expect(calls()).toBe(0);
  });
});
