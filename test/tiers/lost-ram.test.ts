// Lost RAM (issue "Snapshot tiers", item 9): when a memory actor's node dies, the every-turn policy
// restores the last checkpoint and continues at N+1; the on-suspend policy refuses loudly, naming the
// seq of the last good snapshot, from which a fork recovers a consistent child.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors/index.js";
import type { Host } from "../../src/host/host.js";
import type { NodeProcess } from "../../src/runtime/node-process.js";
import {
  childMetas,
  closeAll,
  expectChainVerifies,
  headSeq,
  openTestHost,
  pidExists,
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
    harnesses: [{ name: "counteros", runtime: "spawned", target: "counter", checkpointPolicy: "on-suspend" }],
  });
});
afterAll(closeAll);

/** SIGKILLs the node serving `harness` and waits until the process is gone and its exit observed. */
async function killNode(harness: string): Promise<void> {
  const node: NodeProcess | undefined = spawnedRuntimeOf(host, harness).currentNode;
  expect(node, `a node serves ${harness}`).toBeDefined();
  node!.kill();
  await until(`node ${node!.pid} is dead`, () => !pidExists(node!.pid) && node!.child.signalCode !== null);
}

describe("memory tier: an actor's RAM lost with its node", () => {
  it("every-turn policy: after SIGKILL the next Exec restores the last checkpoint and continues at N+1", async () => {
    const session = (await host.createSession({ harness: "counter" })).uid;
    expect(await turns(host, session, 3)).toEqual(["1", "2", "3"]);
    const checkpoint = await host.journal.latestCheckpoint(session);
    expect(checkpoint?.seq).toBe(await headSeq(host, session));

    await killNode("counter");
    expect(await turn(host, session)).toEqual(["4"]);
    expect(await turn(host, session)).toEqual(["5"]);
    await expectChainVerifies(host, session);
  });

  it("on-suspend policy: after SIGKILL Exec fails naming the loss and the last good snapshot's seq; a fork at that seq recovers", async () => {
    const session = (await host.createSession({ harness: "counteros" })).uid;
    expect(await turns(host, session, 2)).toEqual(["1", "2"]);
    expect(await host.journal.latestCheckpoint(session)).toBeUndefined();
    const { record: suspend } = await host.placer.suspend(session, signal());
    expect((await host.journal.latestCheckpoint(session))?.seq).toBe(suspend.seq);
    await host.placer.resume(session, signal());
    expect(await turns(host, session, 2)).toEqual(["3", "4"]);
    // No checkpoint after those turns: that is the policy.
    expect((await host.journal.latestCheckpoint(session))?.seq).toBe(suspend.seq);

    await killNode("counteros");
    const head = await headSeq(host, session);
    const err = await rejectsWithCode(turn(host, session), ErrorCode.FailedPrecondition);
    expect(err.message).toContain("lost");
    expect(err.message).toContain(`seq ${suspend.seq}`);
    expect(await headSeq(host, session)).toBe(head);
    // Refused again, not silently restarted from zero on a second try.
    await rejectsWithCode(turn(host, session), ErrorCode.FailedPrecondition);
    expect(await headSeq(host, session)).toBe(head);

    const [meta] = childMetas(1, "counteros");
    const forked = await host.placer.fork({ parent: session, atSeq: suspend.seq, children: [meta!], signal: signal() });
    expect(forked.atSeq).toBe(suspend.seq);
    expect(await turn(host, meta!.uid)).toEqual(["3"]);
    await expectChainVerifies(host, meta!.uid);
    await expectChainVerifies(host, session);
  });
});
