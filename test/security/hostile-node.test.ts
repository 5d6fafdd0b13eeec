// The hostile-node suite (issue 24; docs/operations.md "Limits"): a registered node that never answers a
// call, never ends a turn, or sends more than the host's limits allow cannot wedge a session or the host.
// Each case asserts the status the caller gets, that the session is not left busy, that other sessions
// on the same node still run, and that every journal still verifies. Bounded: every deadline here is a
// configured limit of a few hundred ms, every node listens on a unix socket in a temp directory.
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { builtinHarnesses } from "../../harnesses/index.js";
import { ErrorCode } from "../../src/errors/index.js";
import type { Host } from "../../src/host/host.js";
import type { LimitOverrides } from "../../src/limits/index.js";
import { CounterAgent } from "../../harnesses/counteragent/index.js";
import { projectExecutions } from "../../src/controller/projection.js";
import { HostError } from "../../src/errors/index.js";
import type { EventSink, StartInfo } from "../../src/sdk/types.js";
import { type EvilNode, serveEvilNode, silentStream, untilCancelled } from "../fixtures/evil-node.js";
import { closeAll, expectChainVerifies, openTestHost, rejectsWithCode, signal, turn } from "../tiers/helpers.js";

const counter = builtinHarnesses["counter"]!;
const nodes: EvilNode[] = [];

afterEach(async () => {
  await closeAll();
  for (const n of nodes.splice(0)) await n.close();
});
afterAll(async () => {
  await closeAll();
});

/** A host whose only registered harness `evil` is the given node, with short node deadlines. */
async function hostOn(node: EvilNode, limits: LimitOverrides): Promise<Host> {
  nodes.push(node);
  return openTestHost({ harnesses: [{ name: "evil", runtime: "remote", target: node.address }], limits });
}

describe("a remote memory-tier node whose SnapshotActor never answers", () => {
  it("silent snapshot: Exec completes, the session is not left busy, other sessions run, Suspend fails DEADLINE_EXCEEDED naming snapshotMs", async () => {
    const node = await serveEvilNode(counter, {
      actors: {
        // Never sends a chunk; ends only when the host cancels the call (or its deadline passes).
        snapshotActor: (_req, ctx) => silentStream(ctx.signal),
      },
    });
    const host = await hostOn(node, { snapshotMs: 300 });
    const a = (await host.createSession({ harness: "evil" })).uid;
    const b = (await host.createSession({ harness: "evil" })).uid;

    // The turn committed; its every-turn checkpoint misses its deadline and is skipped, not awaited forever.
    expect(await turn(host, a)).toEqual(["1"]);
    expect(host.placer.guard.isBusy(a)).toBe(false);
    expect(await turn(host, b)).toEqual(["1"]);
    expect(await turn(host, a)).toEqual(["2"]);
    expect(node.calls.get("snapshotActor")).toBe(3);

    const err = await rejectsWithCode(host.placer.suspend(a, signal()), ErrorCode.DeadlineExceeded);
    expect(err.message).toContain("snapshotMs=300");
    expect(host.placer.guard.isBusy(a)).toBe(false);
    // The failed suspend wrote nothing and left the live actor serving.
    expect(await turn(host, a)).toEqual(["3"]);
    await expectChainVerifies(host, a);
    await expectChainVerifies(host, b);
  });
});

/** The counter harness, except that input "hang" outputs once and then runs until the host cancels it. */
class EndlessCounter extends CounterAgent {
  override async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    const part = start.inputs[0]?.parts[0]?.part;
    if (part?.case !== "text" || part.value.text !== "hang") return super.run(start, sink, signal);
    await sink.output("working", signal);
    await untilCancelled(signal);
    throw new HostError(ErrorCode.Cancelled, "cancelled by the host");
  }
}

describe("a node whose turn never ends", () => {
  it("endless turn: Exec fails DEADLINE_EXCEEDED naming turnMs, the turn is journaled as interrupted, the session and others run on", async () => {
    const node = await serveEvilNode(() => new EndlessCounter());
    const host = await hostOn(node, { turnMs: 300 });
    const a = (await host.createSession({ harness: "evil" })).uid;
    const b = (await host.createSession({ harness: "evil" })).uid;

    expect(await turn(host, a)).toEqual(["1"]);
    const err = await rejectsWithCode(turn(host, a, "hang"), ErrorCode.DeadlineExceeded);
    expect(err.message).toContain("turnMs=300");
    expect(host.placer.guard.isBusy(a)).toBe(false);
    const executions = projectExecutions(await host.journal.readRange(a));
    expect(executions.map((e) => e.completed)).toEqual([true, false]);
    await expectChainVerifies(host, a);
    // The node's other sessions, and this one, still take turns.
    expect(await turn(host, b)).toEqual(["1"]);
    expect(await turn(host, a)).toEqual(["2"]);
    await expectChainVerifies(host, b);
  });
});
