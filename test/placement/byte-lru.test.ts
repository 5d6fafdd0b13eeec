// ByteLru (src/placement/byte-lru.ts): the byte budget holds after every call, least recently used
// entries go first, and an entry larger than the budget is never kept.
import { describe, expect, it } from "vitest";
import { ByteLru } from "../../src/placement/byte-lru.js";
import { HistoryCache } from "../../src/placement/history-cache.js";
import { RecordCache } from "../../src/placement/record-cache.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { inputEvent } from "../journal/events.js";
import { created } from "../journal/sessions.js";

describe("ByteLru", () => {
  it("byteLruNeverHoldsMoreThanItsBudget", () => {
    const lru = new ByteLru<string>(100);
    lru.set("a", "a", 40);
    lru.set("b", "b", 40);
    lru.get("a");
    lru.set("c", "c", 40);
    expect(lru.totalBytes).toBe(80);
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("a")).toBe("a");
    lru.grow("a", 30);
    expect(lru.totalBytes).toBeLessThanOrEqual(100);
    expect(lru.get("c")).toBeUndefined();
    lru.set("huge", "h", 101);
    expect(lru.get("huge")).toBeUndefined();
    lru.grow("a", 1000);
    expect(lru.get("a")).toBeUndefined();
    expect(lru.totalBytes).toBe(0);
  });

  it("historyAndRecordCachesStayWithinTheirByteBudgets", async () => {
    const journal = await created(new MemoryJournal(), "big", ...Array.from({ length: 20 }, (_, i) => `s-${i}`));
    const history = new HistoryCache(4096);
    const records = new RecordCache(4096);
    const text = "y".repeat(1000);
    for (let i = 0; i < 20; i++) {
      const s = `s-${i}`;
      await journal.appendBatch(s, 0, 0, [inputEvent(text)]);
      const got = await history.get(journal, s, await journal.head(s));
      expect(got).toHaveLength(1);
      expect((await records.window(journal, s)).log.length).toBe(1);
      expect(history.bytes).toBeLessThanOrEqual(4096);
      expect(records.bytes).toBeLessThanOrEqual(4096);
    }
    expect(history.bytes).toBeGreaterThan(2000);
    // A session larger than the budget is still served whole, just not kept.
    await journal.appendBatch(
      "big",
      0,
      0,
      Array.from({ length: 6 }, () => inputEvent(text)),
    );
    expect(await history.get(journal, "big", await journal.head("big"))).toHaveLength(6);
    expect((await records.window(journal, "big")).log.length).toBe(6);
    expect(history.bytes).toBeLessThanOrEqual(4096);
  });
});
