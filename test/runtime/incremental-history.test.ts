// docs/protocol.md §8.8 through the runtimes: a stateless harness on a spawned or remote SDK node sees,
// on every turn, exactly the journal's prior events while the host sends only tails; a node that did
// not negotiate (no Actors, or incremental_history false) keeps getting full histories; a failed turn,
// a restarted node and a second host sharing the session all fall back to a full send, never a wrong one.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { Host } from "../../src/host/host.js";
import { RemoteHarness, serveHarness } from "../../src/node/index.js";
import type { HarnessNode, HistoryStats, ServeHarnessOptions } from "../../src/node/index.js";
import { RemoteRuntime } from "../../src/runtime/remote.js";
import historyDigestHarness, { historyLine } from "../fixtures/harnesses/history-digest.js";
import { closeAll, fixturePath, openTestHost, spawnedRuntimeOf, turn } from "../tiers/helpers.js";

const dir = mkdtempSync(join(tmpdir(), "hh-inchist-rt-"));
const nodes: HarnessNode[] = [];
let sockets = 0;

afterEach(async () => {
  await closeAll();
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function sdkNode(
  opts: Partial<ServeHarnessOptions> = {},
  socket = join(dir, `n${++sockets}.sock`),
): Promise<HarnessNode> {
  const n = await serveHarness(historyDigestHarness, { listen: `unix://${socket}`, ...opts });
  nodes.push(n);
  return n;
}

/** The history line the harness must have printed for the session's last turn: the journal before it. */
async function expectedLine(host: Host, session: string): Promise<string> {
  const records = await host.journal.readRange(session);
  const lastStart = records.filter((r) => r.event.kind === EventKind.EVENT_EXECUTION_START).at(-1);
  if (!lastStart) throw new Error("no execution");
  return historyLine(records.filter((r) => r.seq < lastStart.seq).map((r) => r.event));
}

/** Runs a turn and checks the harness saw exactly the journal's prior events; returns their count. */
async function checkedTurn(host: Host, session: string): Promise<number> {
  const out = await turn(host, session);
  const line = await expectedLine(host, session);
  expect(out).toEqual([line]);
  return Number(/history=(\d+)/.exec(line)?.[1]);
}

async function spawnedHarness(host: Host, name: string, session: string): Promise<RemoteHarness> {
  const inc = await spawnedRuntimeOf(host, name).create({ sessionUid: session, harnessName: name });
  if (!(inc.harness instanceof RemoteHarness)) throw new Error("not a RemoteHarness");
  return inc.harness;
}

async function remoteHarness(host: Host, name: string, session: string): Promise<RemoteHarness> {
  const runtime = host.registry.resolve(name).runtime;
  if (!(runtime instanceof RemoteRuntime)) throw new Error(`${name} is not on the remote runtime`);
  const inc = await runtime.create({ sessionUid: session, harnessName: name });
  if (!(inc.harness instanceof RemoteHarness)) throw new Error("not a RemoteHarness");
  return inc.harness;
}

describe("incremental history on the spawned runtime", () => {
  it("the spawned SDK node negotiates it; over 5 turns the harness sees exactly the journal's prior events and every Start after the first full send carries only the tail", async () => {
    const host = await openTestHost({
      harnesses: [{ name: "digest", runtime: "spawned", target: fixturePath("history-digest.ts") }],
    });
    const session = (await host.createSession({ harness: "digest" })).uid;
    const lengths: number[] = [];
    for (let t = 0; t < 5; t++) lengths.push(await checkedTurn(host, session));
    expect(spawnedRuntimeOf(host, "digest").currentNode?.incrementalHistory).toBe(true);
    const stats = (await spawnedHarness(host, "digest", session)).historyStats;
    // The first turn has no prior events (nothing to send); the second sends its history in full; each
    // later Start carries exactly the events the previous turn added.
    expect(lengths[0]).toBe(0);
    expect(stats).toEqual({ starts: 5, tails: 3, resends: 0, uploads: 0, eventsSent: lengths.at(-1) });
    expect(lengths.reduce((a, b) => a + b, 0)).toBeGreaterThan(stats.eventsSent);
  });

  it("a failed turn makes the next Start full, and the harness history stays the journal's", async () => {
    const host = await openTestHost({
      harnesses: [{ name: "digest", runtime: "spawned", target: fixturePath("history-digest.ts") }],
    });
    const session = (await host.createSession({ harness: "digest" })).uid;
    await checkedTurn(host, session);
    await checkedTurn(host, session);
    await expect(turn(host, session, "fail")).rejects.toThrow(/asked to fail/);
    const r = await spawnedHarness(host, "digest", session);
    const before: HistoryStats = r.historyStats;
    const length = await checkedTurn(host, session);
    const after = r.historyStats;
    expect(after.tails).toBe(before.tails);
    expect(after.eventsSent - before.eventsSent).toBe(length);
    await checkedTurn(host, session);
    expect(r.historyStats.tails).toBe(after.tails + 1);
  });
});

describe("incremental history on the remote runtime", () => {
  it("a node without Actors (like a reference node) gets the full history on every turn", async () => {
    const node = await sdkNode({ actors: false });
    const host = await openTestHost({ harnesses: [{ name: "ref", runtime: "remote", target: node.address }] });
    const session = (await host.createSession({ harness: "ref" })).uid;
    let total = 0;
    for (let t = 0; t < 4; t++) total += await checkedTurn(host, session);
    expect((await remoteHarness(host, "ref", session)).historyStats).toEqual({
      starts: 4,
      tails: 0,
      resends: 0,
      uploads: 0,
      eventsSent: total,
    });
  });

  it("a node reporting incremental_history false gets the full history on every turn", async () => {
    const node = await sdkNode({ historyCache: false });
    const host = await openTestHost({ harnesses: [{ name: "nocache", runtime: "remote", target: node.address }] });
    const session = (await host.createSession({ harness: "nocache" })).uid;
    let total = 0;
    for (let t = 0; t < 4; t++) total += await checkedTurn(host, session);
    expect((await remoteHarness(host, "nocache", session)).historyStats).toEqual({
      starts: 4,
      tails: 0,
      resends: 0,
      uploads: 0,
      eventsSent: total,
    });
  });

  it("a negotiating node gets tails; after it restarts its empty cache refuses the tail and the host resends in full once", async () => {
    const socket = join(dir, "remote-restart.sock");
    const first = await sdkNode({}, socket);
    const host = await openTestHost({ harnesses: [{ name: "inc", runtime: "remote", target: first.address }] });
    const session = (await host.createSession({ harness: "inc" })).uid;
    for (let t = 0; t < 3; t++) await checkedTurn(host, session);
    const r = await remoteHarness(host, "inc", session);
    expect(r.historyStats).toMatchObject({ starts: 3, tails: 1 }); // turn 1 had no history, turn 2 was full
    await first.close();
    nodes.splice(nodes.indexOf(first), 1);
    await sdkNode({}, socket);
    const length = await checkedTurn(host, session);
    // Same process here, so the pid did not change: the node's empty cache refuses the tail and the
    // host resends the full history once; the turn succeeds with the journal's history.
    expect(r.historyStats).toMatchObject({ starts: 5, tails: 2, resends: 1 });
    expect(length).toBeGreaterThan(0);
    await checkedTurn(host, session);
    expect(r.historyStats).toMatchObject({ tails: 3, resends: 1 });
  });

  it("two hosts alternately driving one session on a shared node: every turn sees the journal's history", async () => {
    const node = await sdkNode();
    const journal = join(dir, "shared-journal.db");
    const harnesses = [{ name: "shared", runtime: "remote" as const, target: node.address }];
    const a = await openTestHost({ harnesses, journal });
    const b = await openTestHost({ harnesses, journal });
    const session = (await a.createSession({ harness: "shared" })).uid;
    for (let t = 0; t < 6; t++) await checkedTurn(t % 2 === 0 ? a : b, session);
    // Same host twice in a row: the second Start is a tail again.
    await checkedTurn(a, session);
    const ra = await remoteHarness(a, "shared", session);
    const rb = await remoteHarness(b, "shared", session);
    expect(ra.historyStats.tails).toBeGreaterThan(0);
    expect(ra.historyStats.resends + rb.historyStats.resends).toBeGreaterThan(0);
  });
});
