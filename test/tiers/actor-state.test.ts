// What a memory actor's state may hold and what it is handed (issue "Snapshot tiers", items 6 and 8):
// an unsupported value makes the snapshot fail loudly with its path while the actor stays live and
// nothing is journaled; and I4 is enforced by the host — a memory actor never receives history, even
// after a restore, while a stateless harness always receives the whole prior journal.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventKind, Lifecycle_Kind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ErrorCode } from "../../src/errors/index.js";
import type { Host } from "../../src/host/host.js";
import {
  closeAll,
  expectChainVerifies,
  fixturePath,
  headSeq,
  lifecycleOf,
  openTestHost,
  pidExists,
  records,
  rejectsWithCode,
  signal,
  spawnedRuntimeOf,
  turn,
  turns,
  until,
} from "./helpers.js";

let host: Host;

beforeAll(async () => {
  host = await openTestHost({
    harnesses: [
      { name: "cache", runtime: "spawned", target: fixturePath("cache-harness.ts") },
      { name: "history-counter", runtime: "spawned", target: fixturePath("history-counter.ts") },
      { name: "history-echo", runtime: "spawned", target: fixturePath("history-echo.ts") },
    ],
  });
});
afterAll(closeAll);

describe("memory tier: unsupported values in actor state", () => {
  it("a function in state fails the suspend with the value's path; nothing is journaled and the actor stays live", async () => {
    const session = (await host.createSession({ harness: "cache" })).uid;
    expect(await turn(host, session)).toEqual(["turn 1"]);
    expect(await turn(host, session)).toEqual(["turn 2"]);
    const before = await records(host, session);

    const err = await rejectsWithCode(host.placer.suspend(session, signal()), ErrorCode.FailedPrecondition);
    expect(err.message).toContain('state.cache.get("k")[2]');
    expect(err.message).toContain("function");
    expect((await records(host, session)).map((r) => r.contentHash)).toEqual(before.map((r) => r.contentHash));
    expect((await host.getSession(session)).computeState).toBe("LIVE");

    // The live actor kept its RAM: the third turn counts on from 2.
    expect(await turn(host, session)).toEqual(["turn 3"]);
    await expectChainVerifies(host, session);
    expect(await headSeq(host, session)).toBeGreaterThan(before.length);

    // The every-turn checkpoints after turns 2 and 3 failed the same way without failing the committed
    // turns; the newest checkpoint is still turn 1's, so losing the RAM now is refused loudly.
    const firstEnd = before.find((r) => r.event.kind === EventKind.EVENT_END)!;
    expect((await host.journal.latestCheckpoint(session))?.seq).toBe(firstEnd.seq);
    const node = spawnedRuntimeOf(host, "cache").currentNode!;
    node.kill();
    await until(`node ${node.pid} is dead`, () => !pidExists(node.pid) && node.child.signalCode !== null);
    const head = await headSeq(host, session);
    const lost = await rejectsWithCode(turn(host, session), ErrorCode.FailedPrecondition);
    expect(lost.message).toContain(`seq ${firstEnd.seq}`);
    expect(await headSeq(host, session)).toBe(head);
  });
});

describe("I4: the host never replays history into a memory actor", () => {
  it("I4 a memory restore is not a replay", async () => {
    const session = (await host.createSession({ harness: "history-counter" })).uid;
    expect(await turns(host, session, 3)).toEqual([
      "count=1 history=0",
      "count=2 history=0,0",
      "count=3 history=0,0,0",
    ]);
    const { record } = await host.placer.suspend(session, signal());
    expect(lifecycleOf(record, Lifecycle_Kind.LIFECYCLE_SUSPEND)?.snapshotMemory).toBe(true);
    await host.placer.resume(session, signal());
    // A restored actor already holds turns 1..3: handing it the journal would make the count jump.
    expect(await turn(host, session)).toEqual(["count=4 history=0,0,0,0"]);
    expect(await turn(host, session)).toEqual(["count=5 history=0,0,0,0,0"]);
    await expectChainVerifies(host, session);
  });

  it("a stateless harness receives the full prior history on every turn, across suspend/resume", async () => {
    const session = (await host.createSession({ harness: "history-echo" })).uid;
    // Each turn of this harness journals EXECUTION_START, INPUT, OUTPUT, END.
    expect(await turn(host, session)).toEqual(["history=0 turns=0"]);
    expect(await turn(host, session)).toEqual(["history=4 turns=1"]);
    await host.placer.suspend(session, signal());
    await host.placer.resume(session, signal());
    const head = await headSeq(host, session);
    expect(head).toBe(10);
    expect(await turn(host, session)).toEqual([`history=${head} turns=2`]);
    const all = await records(host, session);
    expect(all.filter((r) => r.event.kind === EventKind.EVENT_EXECUTION_START)).toHaveLength(3);
    await expectChainVerifies(host, session);
  });
});
