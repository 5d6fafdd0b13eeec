// Cancel while another operation of this host holds the session (docs/protocol.md §17.1 rule 7): Cancel
// waits, at most CANCEL_WAIT_MS, for the holder to let the session go or to register as the running
// turn, then does what it says — a turn that registered is cancelled, a parked turn's wait withdrawn —
// instead of answering ABORTED for a hold that ends a moment later; a holder that outlasts the bound is
// named in the ABORTED answer.
import { afterEach, describe, expect, it } from "vitest";
import { textMessage } from "../../src/controller/events.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { gatedJournal } from "../fixtures/gated-journal.js";
import { gatedEchoModel } from "../server/helpers.js";
import { childMetas, closeAll, openTestHost, records, signal } from "../tiers/helpers.js";

afterEach(closeAll);

const input = (t: string) => [textMessage("user", t)];

describe("Cancel while the session is held here", () => {
  it("aCancelBetweenTheTurnsHoldAndItsRegistrationCancelsTheTurn", async () => {
    // A journal with a session lock (as PostgreSQL's): the turn holds the guard while its lock call runs.
    const gated = gatedJournal(new MemoryJournal(), "tryLockSession", {
      tryLockSession: async () => async () => undefined,
    });
    const gate = gatedEchoModel();
    const host = await openTestHost({}, { journal: gated.journal, model: gate.model });
    const s = (await host.createSession({ harness: "echo" })).uid;
    const locking = gated.arm();
    const exec = host.placer.exec({ session: s, inputs: input("x"), signal: signal() });
    const execOutcome = exec.then(
      () => undefined,
      (e: unknown) => e,
    );
    await locking;
    const cancel = host.placer.cancel({ session: s, reason: "early" });
    gated.open();
    expect(await cancel).toBe("cancelled");
    expect(isHostError(await execOutcome, ErrorCode.Cancelled)).toBe(true);
    const last = (await records(host, s)).at(-1)?.event;
    expect(last?.kind).toBe(EventKind.EVENT_ERROR);
  });

  it("aCancelWhileAForkHoldsAParkedSessionWithdrawsTheWaitOnceTheForkEnds", async () => {
    const gated = gatedJournal(new MemoryJournal(), "forkAll");
    const host = await openTestHost({}, { journal: gated.journal });
    const s = (await host.createSession({ harness: "ask" })).uid;
    await host.placer.exec({ session: s, inputs: input("hello"), signal: signal() });
    const forking = gated.arm();
    const fork = host.placer.fork({ parent: s, atSeq: 0, children: childMetas(2, "ask"), signal: signal() });
    await forking;
    const cancel = host.placer.cancel({ session: s, reason: "stop" });
    gated.open();
    expect((await fork).children).toHaveLength(2);
    expect(await cancel).toBe("withdrawn");
    const last = (await records(host, s)).at(-1)?.event;
    expect(last?.body.case === "error" && last.body.value.description).toBe("wait withdrawn by Cancel: stop");
  });

  it("aHolderThatOutlastsCancelsBoundIsNamedInTheAbortedAnswer", async () => {
    const gated = gatedJournal(new MemoryJournal(), "forkAll");
    const host = await openTestHost({}, { journal: gated.journal });
    // A short bound for this host's Cancel (the placer's cancelWaitMs).
    (host.placer as unknown as { state: { cancelWaitMs: number } }).state.cancelWaitMs = 50;
    const s = (await host.createSession({ harness: "ask" })).uid;
    await host.placer.exec({ session: s, inputs: input("hello"), signal: signal() });
    const forking = gated.arm();
    const fork = host.placer.fork({ parent: s, atSeq: 0, children: childMetas(1, "ask"), signal: signal() });
    await forking;
    const refused = await host.placer.cancel({ session: s, reason: "stop" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    gated.open();
    await fork;
    expect(isHostError(refused, ErrorCode.SessionBusy)).toBe(true);
    expect((refused as Error).message).toContain("fork in progress");
    // Nothing was withdrawn: the session still waits.
    const last = (await records(host, s)).at(-1)?.event;
    expect(last?.body.case === "error").toBe(false);
  });
});
