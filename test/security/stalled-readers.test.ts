// Stalled readers: a client that sends an Exec and never reads its stream holds
// at most streamBufferBytes of host memory; past it its updates are dropped, the turn goes on and
// frees the session, and the stream ends RESOURCE_EXHAUSTED naming the limit (seen by the client once
// it reads). Raw HTTP/2 clients on loopback, bounded in count and by polls with deadlines.
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { heldStreamBytes } from "../../src/server/exec-stream.js";
import { drain, startFixture, userInput, type Fixture } from "../server/helpers.js";
import { allJournalsVerify, healthServing, type Stalled, stalledExec } from "./hostile-helpers.js";

const KiB = 1024;
const BUFFER = 64 * KiB;
let f: Fixture;
beforeAll(async () => {
  f = await startFixture({ config: { limits: { streamBufferBytes: BUFFER } } });
});
afterAll(async () => {
  await f?.close();
});

/** Polls (bounded) until an Exec on `session` is accepted again, i.e. the stalled turn let go of it. */
async function untilSessionFree(session: string, fx: Fixture = f): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const { error } = await drain(fx.sessions.exec({ session, inputs: [userInput("again")] }));
    if (error === undefined) return;
    if (error.grpcCode !== status.ABORTED) throw error;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`session ${session} stayed busy`);
}

describe("stalled readers", () => {
  it("aClientThatNeverReadsIsCutOffWithResourceExhaustedAndTheSessionIsFreed", async () => {
    const s = await f.sessions.createSession({ session: { harness: "echo" } });
    const uid = s.metadata?.uid ?? "";
    const stalled = stalledExec(f.server.addr, uid, "z".repeat(200 * KiB));
    await untilSessionFree(uid);
    await healthServing(f.server.addr);
    const end = await stalled.readToEnd();
    expect(end.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(end.message).toContain("streamBufferBytes");
    expect((await f.host.journal.verify(uid)).ok).toBe(true);
  });

  it("manyStalledClientsAreEachCutOffAndTheHostKeepsAnswering", async () => {
    const clients: { uid: string; stalled: Stalled }[] = [];
    for (let i = 0; i < 20; i++) {
      const s = await f.sessions.createSession({ session: { harness: "echo" } });
      const uid = s.metadata?.uid ?? "";
      clients.push({ uid, stalled: stalledExec(f.server.addr, uid, "q".repeat(200 * KiB)) });
    }
    for (const c of clients) await untilSessionFree(c.uid);
    await healthServing(f.server.addr);
    for (const c of clients) expect((await c.stalled.readToEnd()).code).toBe(status.RESOURCE_EXHAUSTED);
    await allJournalsVerify(f.host.journal);
  });

  it("a client that reads gets every record of a turn within the buffer", async () => {
    const { items, error } = await drain(f.sessions.exec({ inputs: [userInput("r".repeat(8 * KiB))] }));
    expect(error).toBeUndefined();
    expect(items.length).toBeGreaterThan(4);
  });

  it("a turn that outruns its reader by more than the buffer still commits; Replay returns it", async () => {
    const s = await f.sessions.createSession({ session: { harness: "echo" } });
    const uid = s.metadata?.uid ?? "";
    const { error } = await drain(f.sessions.exec({ session: uid, inputs: [userInput("b".repeat(200 * KiB))] }));
    expect(error?.grpcCode).toBe(status.RESOURCE_EXHAUSTED);
    const replayed = await drain(f.sessions.replay({ session: uid }));
    expect(replayed.items.at(-1)?.event?.kind).toBe(EventKind.EVENT_END);
  });
});

describe("stalled readers together (streamBufferTotalBytes)", () => {
  const PER_STREAM = 512 * KiB;
  const TOTAL = 512 * KiB;
  const INPUT = 100 * KiB;
  let g: Fixture;
  beforeAll(async () => {
    g = await startFixture({ config: { limits: { streamBufferBytes: PER_STREAM, streamBufferTotalBytes: TOTAL } } });
  });
  afterAll(async () => {
    await g?.close();
  });

  it("stalledStreamsTogetherStayWithinTheHostWideBudget: past it the streams furthest behind are cut, each turn commits", async () => {
    // Each stalled echo turn leaves what the connection did not take waiting: the input appears in four
    // records (message, model call, model result, reply), ~400 KiB, under the per-stream limit, and the
    // connection takes at most a flow-control window of it — so twelve of them want several MiB
    // together: the host-wide budget must cut the streams furthest behind.
    const clients: { uid: string; stalled: Stalled }[] = [];
    for (let i = 0; i < 12; i++) {
      const s = await g.sessions.createSession({ session: { harness: "echo" } });
      const uid = s.metadata?.uid ?? "";
      clients.push({ uid, stalled: stalledExec(g.server.addr, uid, "t".repeat(INPUT)) });
    }
    for (const c of clients) await untilSessionFree(c.uid, g);
    await healthServing(g.server.addr);
    // Every turn is over and no client has read: what the host still holds for them is within budget.
    const held = heldStreamBytes(g.host);
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(TOTAL);
    const ends = [];
    for (const c of clients) ends.push(await c.stalled.readToEnd());
    const cutByTotal = ends.filter(
      (e) => e.code === status.RESOURCE_EXHAUSTED && e.message.includes("streamBufferTotalBytes"),
    );
    expect(ends.every((e) => e.code === status.OK || e.code === status.RESOURCE_EXHAUSTED)).toBe(true);
    expect(cutByTotal.length).toBeGreaterThan(0);
    await allJournalsVerify(g.host.journal);
  });
});
