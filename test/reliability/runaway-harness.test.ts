// A harness that ignores its abort signal cannot hold a turn, a session or the host past the turn's
// deadline (docs/operations.md, "Limits": turnMs). The turn ends when its signal fires; the harness's
// later attempts to write are refused and never reach the journal; its late failure is absorbed; a
// replay of a turn that never ends stops at turnMs with DEADLINE_EXCEEDED, not a false divergence.
import { toJsonString } from "@bufbuild/protobuf";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors/index.js";
import type { Host } from "../../src/host/host.js";
import { projectExecutions } from "../../src/projection/session-log.js";
import { EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { stubbornLatch } from "../fixtures/harnesses/stubborn.js";
import {
  closeAll,
  expectChainVerifies,
  fixturePath,
  openTestHost,
  rejectsWithCode,
  signal,
  turn,
} from "../tiers/helpers.js";

const latch = stubbornLatch();

async function stubbornHost(turnMs: number): Promise<Host> {
  return openTestHost({
    harnesses: [{ name: "stubborn", runtime: "local", target: fixturePath("stubborn.ts") }],
    limits: { turnMs },
  });
}

/** Polls until `check` holds, failing after `ms` (an event we cannot subscribe to: the harness's own code). */
async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met before the deadline");
    await new Promise((r) => setTimeout(r, 10));
  }
}

afterEach(() => {
  latch.release?.();
  latch.hangAll = false;
  latch.release = undefined;
  latch.outcome = undefined;
});
afterAll(closeAll);

describe("a harness that ignores its signal", () => {
  it("aTurnEndsAtItsDeadlineEvenIfTheHarnessIgnoresItsSignal", async () => {
    const host = await stubbornHost(300);
    const s = (await host.createSession({ harness: "stubborn" })).uid;
    const err = await rejectsWithCode(turn(host, s, "hang"), ErrorCode.DeadlineExceeded);
    expect(err.message).toContain("turnMs=300");
    // The turn ended while the harness was still running: it has not yet tried to write again.
    expect(latch.release).toBeDefined();
    expect(latch.outcome).toBeUndefined();
    expect(host.placer.guard.isBusy(s)).toBe(false);
    // The session takes its next turn while the runaway harness is still waiting.
    expect(await turn(host, s, "next")).toEqual(["echo: next"]);
    await expectChainVerifies(host, s);
  });

  it("aRunawayHarnessCannotWriteAfterItsTurnEnded", async () => {
    const host = await stubbornHost(300);
    const s = (await host.createSession({ harness: "stubborn" })).uid;
    await rejectsWithCode(turn(host, s, "hang"), ErrorCode.DeadlineExceeded);
    const before = await host.journal.readRange(s);
    latch.release?.();
    await until(() => latch.outcome !== undefined);
    expect(latch.outcome).toMatch(/^refused: /);
    const after = await host.journal.readRange(s);
    expect(after.length).toBe(before.length);
    expect(after.map((r) => toJsonString(EventSchema, r.event)).join("\n")).not.toContain('"late"');
    expect(projectExecutions(after).map((e) => e.completed)).toEqual([false]);
    await expectChainVerifies(host, s);
  });

  it("aRunawayHarnessFailingAfterItsTurnEndedDoesNotReachTheHost", async () => {
    const host = await stubbornHost(300);
    const s = (await host.createSession({ harness: "stubborn" })).uid;
    await rejectsWithCode(turn(host, s, "hang-throw"), ErrorCode.DeadlineExceeded);
    const release = latch.release;
    expect(release).toBeDefined();
    const rejected = new Promise<unknown>((resolve) => process.once("unhandledRejection", resolve));
    release?.();
    // Vitest fails the run on an unhandled rejection; the host also still answers.
    expect(await turn(host, s, "after")).toEqual(["echo: after"]);
    const raced = await Promise.race([rejected, new Promise((r) => setImmediate(() => setImmediate(() => r("none"))))]);
    expect(raced).toBe("none");
  });

  it("aReplayOfATurnThatNeverEndsStopsAtTurnMsWithDeadlineExceeded", async () => {
    const host = await stubbornHost(300);
    const s = (await host.createSession({ harness: "stubborn" })).uid;
    expect(await turn(host, s, "hi")).toEqual(["echo: hi"]);
    latch.hangAll = true;
    const err = await rejectsWithCode(host.placer.replay(s, signal()), ErrorCode.DeadlineExceeded);
    expect(err.message).toContain("turnMs=300");
    latch.hangAll = false;
    expect((await host.placer.replay(s, signal())).outputs).toEqual(["echo: hi"]);
  });
});
