// followAbort (src/abort.ts): a follower aborts with its source's reason, once, and stops listening
// when told — a long-lived source never keeps listeners of followers whose work is over.
import { getEventListeners } from "node:events";
import { describe, expect, it, vi } from "vitest";
import { boundedSignal, followAbort } from "../src/abort.js";

describe("followAbort", () => {
  it("aFollowerAbortsWithItsSourcesReason", () => {
    const source = new AbortController();
    const target = new AbortController();
    followAbort(source.signal, target);
    expect(target.signal.aborted).toBe(false);
    const reason = new Error("client went away");
    source.abort(reason);
    expect(target.signal.reason).toBe(reason);
  });

  it("aFollowerOfAnAbortedSourceAbortsAtOnceAndLeavesNoListener", () => {
    const source = new AbortController();
    source.abort("early");
    const target = new AbortController();
    const unfollow = followAbort(source.signal, target);
    expect(target.signal.reason).toBe("early");
    expect(getEventListeners(source.signal, "abort")).toHaveLength(0);
    unfollow();
  });

  it("unfollowingRemovesTheListenerAndTheSourceNoLongerReachesTheTarget", () => {
    const source = new AbortController();
    const targets = Array.from({ length: 50 }, () => new AbortController());
    const unfollows = targets.map((t) => followAbort(source.signal, t));
    expect(getEventListeners(source.signal, "abort")).toHaveLength(50);
    for (const u of unfollows) u();
    expect(getEventListeners(source.signal, "abort")).toHaveLength(0);
    source.abort("late");
    for (const t of targets) expect(t.signal.aborted).toBe(false);
  });

  it("aTargetAbortedForAnotherReasonKeepsThatReason", () => {
    const source = new AbortController();
    const target = new AbortController();
    followAbort(source.signal, target);
    target.abort("deadline");
    source.abort("client");
    expect(target.signal.reason).toBe("deadline");
  });
});

describe("boundedSignal", () => {
  it("aBoundedSignalAbortsWithItsReasonWhenItsTimeIsUpAndDoneLeavesNothingBehind", () => {
    vi.useFakeTimers();
    try {
      const source = new AbortController();
      const timed = boundedSignal(source.signal, 50, () => "time is up");
      vi.advanceTimersByTime(49);
      expect(timed.signal.aborted).toBe(false);
      vi.advanceTimersByTime(1);
      expect(timed.signal.reason).toBe("time is up");
      timed.done();
      const cleared = boundedSignal(source.signal, 50, () => "never");
      cleared.done();
      expect(getEventListeners(source.signal, "abort")).toHaveLength(0);
      vi.advanceTimersByTime(100);
      expect(cleared.signal.aborted).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it("aBoundedSignalFollowsItsSourceFirst", () => {
    const source = new AbortController();
    const timed = boundedSignal(source.signal, 60_000, () => "late");
    source.abort("client");
    expect(timed.signal.reason).toBe("client");
    timed.done();
    const alone = boundedSignal(undefined, 60_000, () => "late");
    expect(alone.signal.aborted).toBe(false);
    alone.done();
  });
});
