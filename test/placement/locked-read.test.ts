// withLockedSession (src/placement/locked-session.ts): under the session's hold the session's row is
// read once, and the chain check verifies to the head that read found — the head is not read again.
// Another host's records appended before the hold are still seen and verified (the row carries them).
import { afterEach, describe, expect, it } from "vitest";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { observedJournal } from "../fixtures/counting-journal.js";
import { closeAll, openTestHost, turn } from "../tiers/helpers.js";

afterEach(closeAll);

/** `inner` with the calls that read a session's row (getSession, head) logged by name. */
function rowReadsLogged(inner: Journal): { journal: Journal; reads: string[] } {
  const reads: string[] = [];
  const journal = observedJournal(inner, (method) => {
    if (method === "getSession" || method === "head") reads.push(method);
  });
  return { journal, reads };
}

describe("the session as an operation reads it under the hold", () => {
  it("aTurnReadsTheSessionsRowOnceUnderTheHoldAndVerifiesToTheHeadItFound", async () => {
    const logged = rowReadsLogged(new MemoryJournal());
    const host = await openTestHost({}, { journal: logged.journal });
    const session = (await host.createSession({ harness: "echo" })).uid;
    await turn(host, session, "one");
    logged.reads.length = 0;
    expect(await turn(host, session, "two")).toEqual(["echo:two"]);
    expect(logged.reads).toEqual(["getSession"]);
  });

  it("recordsAnotherHostAppendedBeforeTheHoldAreVerifiedThroughTheRowsHead", async () => {
    const shared = new MemoryJournal();
    const ranges: [number, number][] = [];
    const seen = observedJournal(shared, (method, args) => {
      if (method === "read" || method === "readRange") ranges.push([Number(args[1]), Number(args[2])]);
    });
    const a = await openTestHost({}, { journal: seen });
    const b = await openTestHost({}, { journal: shared });
    const session = (await a.createSession({ harness: "echo" })).uid;
    await turn(a, session, "one");
    const mine = (await shared.head(session)).seq;
    await turn(b, session, "two");
    const theirs = (await shared.head(session)).seq;
    ranges.length = 0;
    expect(await turn(a, session, "three")).toEqual(["echo:three"]);
    // A's chain check read what B appended: the row read under the hold carried B's head.
    expect(ranges.some(([from, to]) => from <= mine + 1 && (to === 0 || to >= theirs))).toBe(true);
  });
});
