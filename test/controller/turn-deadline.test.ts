// turnDeadline (src/controller/turn-deadline.ts): the turn's signal fires with the caller's own reason
// when the caller aborts, with DEADLINE_EXCEEDED naming turnMs when the limit passes, and `done` leaves
// neither a timer nor a listener on the caller's signal.
import { afterEach, describe, expect, it, vi } from "vitest";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import { turnDeadline } from "../../src/controller/turn-deadline.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("turnDeadline", () => {
  it("follows the caller's abort with the caller's reason", () => {
    const caller = new AbortController();
    const d = turnDeadline(caller.signal, 60_000);
    const reason = new HostError(ErrorCode.Cancelled, "gone");
    caller.abort(reason);
    expect(d.signal.aborted).toBe(true);
    expect(d.signal.reason).toBe(reason);
    d.done();
  });

  it("fires DEADLINE_EXCEEDED naming turnMs when the limit passes", async () => {
    vi.useFakeTimers();
    const d = turnDeadline(new AbortController().signal, 250);
    await vi.advanceTimersByTimeAsync(250);
    expect(d.signal.aborted).toBe(true);
    expect(d.signal.reason).toMatchObject({ code: ErrorCode.DeadlineExceeded });
    expect(String((d.signal.reason as Error).message)).toContain("turnMs=250");
  });

  it("a caller already aborted gives an aborted signal; done leaves no timer and no listener", () => {
    vi.useFakeTimers();
    const gone = new AbortController();
    gone.abort(new HostError(ErrorCode.Cancelled, "before"));
    expect(turnDeadline(gone.signal, 1000).signal.reason).toBe(gone.signal.reason);

    const caller = new AbortController();
    const added = vi.spyOn(caller.signal, "addEventListener");
    const removed = vi.spyOn(caller.signal, "removeEventListener");
    const d = turnDeadline(caller.signal, 1000);
    d.done();
    expect(vi.getTimerCount()).toBe(0);
    expect(removed.mock.calls.length).toBe(added.mock.calls.length);
    caller.abort(new Error("after the turn"));
    vi.advanceTimersByTime(2000);
    expect(d.signal.aborted).toBe(false);
  });
});
