// Health re-probes an unreadable journal: NOT_SERVING as soon as a call finds it unreadable, probed
// again while each probe fails (health stays NOT_SERVING), SERVING after the first probe that reads it
// all, and no probe once the server stops.
import { describe, expect, it, vi } from "vitest";
import { JournalHealth } from "../../src/server/journal-health.js";

describe("journal health", () => {
  it("anUnreadableJournalIsProbedUntilReadableThenServing", async () => {
    const seen: boolean[] = [];
    let failures = 3;
    let probes = 0;
    let serving!: () => void;
    const back = new Promise<void>((r) => (serving = r));
    const health = new JournalHealth({
      probeMs: 1,
      probe: async () => {
        probes++;
        if (failures-- > 0) throw new Error("SQLITE_CORRUPT");
      },
      setServing(ok) {
        seen.push(ok);
        if (ok) serving();
      },
    });
    health.unreadable(new Error("SQLITE_CORRUPT"));
    health.unreadable(new Error("SQLITE_CORRUPT")); // a second failing call starts no second probe loop
    await back;
    expect(probes).toBe(4);
    expect(seen).toEqual([false, false, true]);
    health.stop();
  });

  it("aStoppedHealthNeverProbes", () => {
    vi.useFakeTimers();
    let probes = 0;
    const health = new JournalHealth({
      probeMs: 1,
      probe: async () => void probes++,
      setServing() {},
    });
    health.unreadable(new Error("x"));
    health.stop();
    vi.advanceTimersByTime(1000);
    vi.useRealTimers();
    expect(probes).toBe(0);
  });
});
