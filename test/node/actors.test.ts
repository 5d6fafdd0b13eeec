// The Actors service end to end: snapshot → drop → restore continues the actor's RAM state; corrupt,
// unknown, busy and duplicate cases are refused with the right status and install nothing.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Actors } from "../../src/gen/harnesshost/v1/actors_pb.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { ActorsClient, RemoteHarness, serveHarness } from "../../src/node/index.js";
import type { HarnessNode } from "../../src/node/index.js";
import { RpcError, createClient } from "../../src/wire/index.js";
import { RecordingSink, ScriptedHarness, failureOf, startInfo } from "./fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "hh-actors-"));
let node: HarnessNode;
let actors: ActorsClient;
const remotes: RemoteHarness[] = [];
let turnNo = 0;

async function turn(session: string, command: string, sink = new RecordingSink()): Promise<string[]> {
  const r = new RemoteHarness({ address: node.address, session });
  remotes.push(r);
  turnNo += 1;
  await r.run(startInfo(turnNo.toString(16).padStart(16, "0"), command), sink, new AbortController().signal);
  return sink.outputs();
}

beforeAll(async () => {
  node = await serveHarness(() => new ScriptedHarness(), { listen: `unix://${join(dir, "actors.sock")}` });
  actors = new ActorsClient({ address: node.address });
});
afterAll(async () => {
  for (const r of remotes) r.close();
  actors.close();
  await node.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("Actors service", () => {
  it("reports node info", async () => {
    expect(await actors.nodeInfo()).toEqual({
      pid: process.pid,
      incrementalHistory: true,
      codecs: ["v8/1"],
      instanceDrops: true,
      wholeRestore: true,
      restoreFromFile: true,
      snapshotToFile: true,
      historyUpload: true,
      buildDigest: "",
    });
  });

  // docs/protocol.md §8.5
  it("a drop naming a restored instance removes only that instance: a late drop after a newer restore is a no-op", async () => {
    expect(await turn("sess-inst", "count")).toEqual(["count=1"]);
    const bytes = await actors.snapshot("sess-inst");
    await actors.restore("sess-inst", bytes, { replace: true, instance: "aaaa" });
    await actors.restore("sess-inst", bytes, { replace: true, instance: "bbbb" });
    // The drop meant for "aaaa" arrives after "bbbb" replaced it: nothing is removed.
    expect(await actors.drop("sess-inst", { instance: "aaaa" })).toBe(false);
    expect(await turn("sess-inst", "count")).toEqual(["count=2"]);
    expect(await actors.drop("sess-inst", { instance: "bbbb" })).toBe(true);
    expect((await actors.list()).some((a) => a.session === "sess-inst")).toBe(false);
    // An actor a turn created is unnamed: only an unnamed drop removes it.
    expect(await turn("sess-inst", "count")).toEqual(["count=1"]);
    expect(await actors.drop("sess-inst", { instance: "bbbb" })).toBe(false);
    expect(await actors.drop("sess-inst")).toBe(true);
  });

  it("snapshot → drop → restore: the actor's state continues, registered classes keep their prototype", async () => {
    expect(await turn("sess-1", "count")).toEqual(["count=1"]);
    expect(await turn("sess-1", "count")).toEqual(["count=2"]);
    expect(await turn("sess-1", "tally")).toEqual(["tally=10"]);
    const bytes = await actors.snapshot("sess-1");
    expect(bytes.length).toBeGreaterThan(0);
    expect((await actors.list()).find((a) => a.session === "sess-1")?.turns).toBe(3);
    expect(await actors.drop("sess-1")).toBe(true);
    expect(await actors.drop("sess-1")).toBe(false);
    expect(await turn("sess-gone-check", "count")).toEqual(["count=1"]);
    expect(await actors.restore("sess-1", bytes)).toBe(bytes.length);
    expect((await actors.list()).find((a) => a.session === "sess-1")?.turns).toBe(0);
    expect(await turn("sess-1", "count")).toEqual(["count=3"]);
    expect(await turn("sess-1", "tally")).toEqual(["tally=20"]);
  });

  it("a dropped actor starts over", async () => {
    await turn("sess-2", "count");
    await actors.drop("sess-2");
    expect(await turn("sess-2", "count")).toEqual(["count=1"]);
  });

  it("states over 1 MiB travel in chunks and round-trip", async () => {
    expect(await turn("sess-big", "grow")).toEqual([`blob=${2.5 * 1024 * 1024}`]);
    await turn("sess-big", "count");
    const snap = await actors.snapshotWithTrailer("sess-big");
    expect(snap.bytes.length).toBeGreaterThan(2.5 * 1024 * 1024);
    expect(snap.sha256).toBe(createHash("sha256").update(snap.bytes).digest("hex"));
    expect(snap.codec).toBe("v8/1");
    await actors.restore("sess-big-copy", snap.bytes);
    expect(await turn("sess-big-copy", "count")).toEqual(["count=2"]);
    const copy = await actors.snapshot("sess-big-copy");
    expect(copy.length).toBeGreaterThan(2.5 * 1024 * 1024);
  });

  it("a corrupted restore (one byte flipped, trailer kept) is DATA_LOSS and installs nothing", async () => {
    await turn("sess-3", "count");
    const bytes = await actors.snapshot("sess-3");
    const raw = createClient(Actors, node.address);
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    const flipped = Uint8Array.from(bytes);
    const mid = Math.floor(flipped.length / 2);
    flipped[mid] = (flipped[mid] ?? 0) ^ 0xff;
    async function* frames() {
      yield { item: { case: "header" as const, value: { session: "sess-3-copy" } } };
      yield { item: { case: "chunk" as const, value: { chunk: { case: "data" as const, value: flipped } } } };
      yield {
        item: {
          case: "chunk" as const,
          value: { chunk: { case: "trailer" as const, value: { sha256, size: BigInt(bytes.length), codec: "v8/1" } } },
        },
      };
    }
    const err = await failureOf(raw.restoreActor(frames()));
    raw.close();
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).grpcCode).toBe(GrpcStatus.DATA_LOSS);
    expect((await actors.list()).some((a) => a.session === "sess-3-copy")).toBe(false);
  });

  it("a truncated restore (no trailer) is DATA_LOSS", async () => {
    const raw = createClient(Actors, node.address);
    async function* frames() {
      yield { item: { case: "header" as const, value: { session: "sess-trunc" } } };
      yield {
        item: { case: "chunk" as const, value: { chunk: { case: "data" as const, value: new Uint8Array([1, 2, 3]) } } },
      };
    }
    const err = await failureOf(raw.restoreActor(frames()));
    raw.close();
    expect(isHostError(err, ErrorCode.DataLoss)).toBe(true);
  });

  it("snapshot of an unknown session is NOT_FOUND", async () => {
    const err = await failureOf(actors.snapshot("sess-unknown"));
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).grpcCode).toBe(GrpcStatus.NOT_FOUND);
  });

  it("restore over an existing actor is ALREADY_EXISTS unless replace", async () => {
    await turn("sess-4", "count");
    await turn("sess-4", "count");
    const two = await actors.snapshot("sess-4");
    await turn("sess-4", "count");
    const err = await failureOf(actors.restore("sess-4", two));
    expect(isHostError(err, ErrorCode.AlreadyExists)).toBe(true);
    expect(await turn("sess-4", "count")).toEqual(["count=4"]);
    await actors.restore("sess-4", two, { replace: true });
    expect(await turn("sess-4", "count")).toEqual(["count=3"]);
  });

  it("snapshot while the actor is mid-turn is ABORTED; the actor stays live", async () => {
    const sink = new RecordingSink();
    const ac = new AbortController();
    const r = new RemoteHarness({ address: node.address, session: "sess-5" });
    remotes.push(r);
    const running = r.run(startInfo("00000000000005a1", "wait"), sink, ac.signal);
    await sink.outputSeen("waiting");
    const err = await failureOf(actors.snapshot("sess-5"));
    expect((err as RpcError).grpcCode).toBe(GrpcStatus.ABORTED);
    ac.abort();
    await failureOf(running);
  });

  it("a node served with actors: false does not serve Actors", async () => {
    const bare = await serveHarness(() => new ScriptedHarness(), {
      listen: `unix://${join(dir, "bare.sock")}`,
      actors: false,
    });
    const client = new ActorsClient({ address: bare.address });
    const err = await failureOf(client.nodeInfo());
    client.close();
    await bare.close();
    expect(isHostError(err, ErrorCode.Unimplemented)).toBe(true);
  });
});
