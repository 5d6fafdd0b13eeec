// Replay of a memory-tier session re-executes every turn on one fresh actor, serving recorded effects:
// the counter reproduces 1, 2, 3 with zero model calls and the journal unchanged (I1, I5).
import { afterAll, describe, expect, it } from "vitest";
import { newSessionUid } from "../../src/controller/ids.js";
import { closeAll, openTestHost, signal, turns } from "./helpers.js";

afterAll(closeAll);

describe("memory-tier replay", () => {
  it("replays a counter session on one throwaway actor, leaving the live actor and the journal alone", async () => {
    const host = await openTestHost({ nodeIdleMs: 60_000 });
    const s = await host.createSession({ harness: "counter" });
    expect(await turns(host, s.uid, 3)).toEqual(["1", "2", "3"]);
    const before = (await host.journal.readRange(s.uid)).map((r) => r.contentHash);
    const replay = await host.placer.replay(s.uid, signal());
    expect(replay.outputs).toEqual(["1", "2", "3"]);
    expect((await host.journal.readRange(s.uid)).map((r) => r.contentHash)).toEqual(before);
    expect(await turns(host, s.uid, 1)).toEqual(["4"]); // the live actor was not disturbed
  });
});

describe("memory-tier sessions before their first turn", () => {
  it("suspend, resume and fork of a counter session with no turns capture nothing and start fresh actors", async () => {
    const host = await openTestHost({ nodeIdleMs: 60_000 });
    const s = await host.createSession({ harness: "counter" });
    const { ref } = await host.placer.suspend(s.uid, signal());
    expect(ref).toMatchObject({ memory: false, externalUri: "" });
    await host.placer.resume(s.uid, signal());
    const child = { uid: newSessionUid(), project: "default", harness: "counter" };
    await host.placer.fork({ parent: s.uid, atSeq: 0, children: [child], signal: signal() });
    expect(await turns(host, s.uid, 1)).toEqual(["1"]);
    expect(await turns(host, child.uid, 2)).toEqual(["1", "2"]);
  });
});
