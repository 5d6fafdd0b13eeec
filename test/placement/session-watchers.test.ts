// SessionWatchers (src/placement/session-watchers.ts): a fire runs each callback registered before it
// exactly once, for that session only, and forgets them; a stopped callback never runs.
import { describe, expect, it } from "vitest";
import { SessionWatchers } from "../../src/placement/session-watchers.js";

describe("session watchers", () => {
  it("aFireRunsEachWatcherOfItsSessionOnceAndAStoppedWatcherNever", () => {
    const w = new SessionWatchers();
    const ran: string[] = [];
    w.watch("s1", () => ran.push("a"));
    const stop = w.watch("s1", () => ran.push("b"));
    w.watch("s2", () => ran.push("other"));
    stop();
    w.fire("s1");
    w.fire("s1");
    expect(ran).toEqual(["a"]);
    w.fire("s2");
    expect(ran).toEqual(["a", "other"]);
  });
});
