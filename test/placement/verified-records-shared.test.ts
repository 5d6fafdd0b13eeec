// What the chain check reads is read once (src/placement/chain-check.ts, placement-state.ts): when
// another host appended to a session, the records this host's chain check reads and verifies extend its
// record and history caches, which used to read the same records again (three reads of one range per
// operation), and a host's first operation on a session builds the record cache's projection from the
// chain check's full walk, so the session is read once for both — and a walk that fails verification
// leaves nothing cached. Records that do not chain onto a cache leave it as it was, to extend itself.
import { afterEach, describe, expect, it } from "vitest";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import type { Journal, JournalRecord } from "../../src/journal/types.js";
import { HistoryCache } from "../../src/placement/history-cache.js";
import { RecordCache } from "../../src/placement/record-cache.js";
import { closeAll, openTestHost, turn } from "../tiers/helpers.js";
import { inputEvent } from "../journal/events.js";
import { observedJournal } from "../fixtures/counting-journal.js";
import { ErrorCode } from "../../src/errors/index.js";
import { rejectsWithCode } from "../tiers/helpers.js";
import { created } from "../journal/sessions.js";

afterEach(closeAll);

/** `inner` with every read of a record range (read or readRange) logged as [from, to]. */
function readLogged(inner: Journal): { journal: Journal; reads: [number, number][] } {
  const reads: [number, number][] = [];
  const journal = observedJournal(inner, (method, args) => {
    if (method === "read" || method === "readRange") reads.push([Number(args[1]), Number(args[2])]);
  });
  return { journal, reads };
}

describe("records another host appended", () => {
  it("theRecordsTheChainCheckVerifiedAreNotReadAgainByTheCaches", async () => {
    const shared = new MemoryJournal();
    const logged = readLogged(shared);
    const a = await openTestHost({}, { journal: logged.journal });
    const b = await openTestHost({}, { journal: shared });
    const session = (await a.createSession({ harness: "echo" })).uid;
    await turn(a, session, "one");
    await turn(b, session, "two");
    const before = (await shared.head(session)).seq;
    await turn(b, session, "three");
    const fromB = (await shared.head(session)).seq;
    expect(fromB).toBeGreaterThan(before);
    logged.reads.length = 0;
    expect(await turn(a, session, "four")).toEqual(["echo:four"]);
    // Every record B appended since A last saw the session is read by A exactly once.
    const readsOf = (seq: number) => logged.reads.filter(([from, to]) => from <= seq && seq <= to).length;
    for (let seq = 1; seq <= fromB; seq++) expect(readsOf(seq), `record ${seq}`).toBeLessThanOrEqual(1);
    expect(readsOf(fromB)).toBe(1);
  });
});

describe("a host's first operation on a session", () => {
  it("theChainChecksFullWalkBuildsTheRecordCacheSoTheSessionIsNotFoldedFromAReadAgain", async () => {
    const shared = new MemoryJournal();
    const a = await openTestHost({}, { journal: shared });
    const session = (await a.createSession({ harness: "echo" })).uid;
    for (const text of ["one", "two", "three"]) await turn(a, session, text);
    const logged = readLogged(shared);
    let walks = 0;
    const journal = observedJournal(logged.journal, (method) => {
      if (method === "verify") walks += 1;
    });
    const b = await openTestHost({}, { journal });
    expect(await turn(b, session, "four")).toEqual(["echo:four"]);
    expect(walks).toBe(1);
    // The one other read from seq 1 is the echo turn's Start.history (a stateless harness's whole
    // session); the record cache's fold read it too before.
    expect(logged.reads.filter(([from]) => from === 1)).toHaveLength(1);
    expect(b.placer.records.holds(session)).toBe(true);
  });

  it("aWalkThatFailsVerificationLeavesNothingCached", async () => {
    const shared = new MemoryJournal();
    const a = await openTestHost({}, { journal: shared });
    const session = (await a.createSession({ harness: "echo" })).uid;
    await turn(a, session, "one");
    // Every record checks out as it is walked, then the walk fails (as a truncated or tampered tail would).
    const failing = new Proxy(shared, {
      get(target, prop, receiver) {
        if (prop === "verify")
          return async (s: string, onRecord?: Parameters<Journal["verify"]>[1]) => {
            const ok = await target.verify(s, onRecord);
            if (!ok.ok) throw new Error("the journal should verify");
            return { ok: false, session: s, kind: "truncated", seq: ok.head.seq, message: "walk failed at the end" };
          };
        return Reflect.get(target, prop, receiver);
      },
    });
    const b = await openTestHost({}, { journal: failing });
    await rejectsWithCode(turn(b, session, "two"), ErrorCode.DataLoss);
    expect(b.placer.records.holds(session)).toBe(false);
  });
});

describe("offering verified records to the caches", () => {
  const input = (text: string) => inputEvent(text, "");

  /** A one-record session "s" held by a fresh record cache and history cache. */
  async function cachedAtSeq1(): Promise<{ journal: MemoryJournal; records: RecordCache; history: HistoryCache }> {
    const journal = await created(new MemoryJournal(), "s");
    await journal.appendBatch("s", 0, 0, [input("a")]);
    const records = new RecordCache();
    const history = new HistoryCache();
    await records.window(journal, "s");
    await history.get(journal, "s", await journal.head("s"));
    return { journal, records, history };
  }

  it("recordsThatDoNotChainOntoACachedSessionLeaveItForItsOwnRead", async () => {
    const { journal, records, history } = await cachedAtSeq1();
    await journal.appendBatch("s", 1, 0, [input("b")]);
    const later: JournalRecord[] = await journal.appendBatch("s", 2, 0, [input("c")]);
    // seq 3 does not chain onto the caches' seq 1: ignored, not a reason to drop what they hold.
    records.offer("s", later);
    history.offer("s", later);
    expect(records.bytes).toBeGreaterThan(0);
    expect(history.bytes).toBeGreaterThan(0);
    const head = await journal.head("s");
    const window = await records.window(journal, "s", head);
    expect(window.log.head).toEqual(head);
    expect((await history.get(journal, "s", head)).length).toBe(3);
  });

  it("recordsThatChainOnExtendTheCachesWithoutARead", async () => {
    const { journal, records, history } = await cachedAtSeq1();
    const next = await journal.appendBatch("s", 1, 0, [input("b"), input("c")]);
    records.offer("s", next);
    history.offer("s", next);
    const logged = readLogged(journal);
    const head = await journal.head("s");
    expect((await records.window(logged.journal, "s", head)).log.head).toEqual(head);
    expect((await history.get(logged.journal, "s", head)).length).toBe(3);
    expect(logged.reads).toEqual([]);
  });
});
