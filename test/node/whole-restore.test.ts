// docs/protocol.md §8.9 RestoreActorWhole: a snapshot of at most 3 MiB restored in one unary call,
// with exactly the checks of the RestoreActor stream, sent only to a node that reports whole_restore.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Server, status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Actors } from "../../src/gen/harnesshost/v1/actors_pb.js";
import { ErrorCode, HostError, isHostError } from "../../src/errors/index.js";
import { ActorsClient } from "../../src/node/index.js";
import { WHOLE_RESTORE_MAX_BYTES } from "../../src/node/limits.js";
import { RpcError, addService, listen } from "../../src/wire/index.js";
import type { MethodsOf, ServiceClient, ServiceImpl } from "../../src/wire/index.js";
import { failureOf } from "./fixtures.js";
import { type ScriptedNode, startScriptedNode } from "./scripted-node.js";

const dir = mkdtempSync(join(tmpdir(), "hh-whole-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");

describe("RestoreActorWhole on the SDK node (§8.9)", () => {
  let rig: ScriptedNode;
  let actors: ActorsClient;
  let raw: ServiceClient<MethodsOf<typeof Actors>>;
  const turn = (session: string, command: string): Promise<string[]> => rig.turn(session, command);

  beforeAll(async () => {
    rig = await startScriptedNode(dir);
    ({ actors, raw } = rig);
  });
  afterAll(() => rig.close());

  it("is reported in NodeInfo", async () => {
    expect((await actors.nodeInfo()).wholeRestore).toBe(true);
  });

  it("restores the state a snapshot captured; the actor continues from it", async () => {
    await turn("sess-w1", "count");
    await turn("sess-w1", "count");
    const bytes = await actors.snapshot("sess-w1");
    const res = await raw.restoreActorWhole({
      header: { session: "sess-w1-copy" },
      data: bytes,
      trailer: { sha256: sha256(bytes), size: BigInt(bytes.length), codec: "v8/1" },
    });
    expect(res).toMatchObject({ session: "sess-w1-copy", size: BigInt(bytes.length) });
    expect(await turn("sess-w1-copy", "count")).toEqual(["count=3"]);
  });

  it("a flipped byte under the original trailer is DATA_LOSS and installs nothing", async () => {
    await turn("sess-w2", "count");
    const bytes = await actors.snapshot("sess-w2");
    const flipped = Uint8Array.from(bytes);
    const mid = Math.floor(flipped.length / 2);
    flipped[mid] = (flipped[mid] ?? 0) ^ 0xff;
    const err = await failureOf(
      raw.restoreActorWhole({
        header: { session: "sess-w2-copy" },
        data: flipped,
        trailer: { sha256: sha256(bytes), size: BigInt(bytes.length), codec: "v8/1" },
      }),
    );
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).grpcCode).toBe(GrpcStatus.DATA_LOSS);
    expect((await actors.list()).some((a) => a.session === "sess-w2-copy")).toBe(false);
  });

  it("refuses a missing trailer (DATA_LOSS), a missing header (INVALID_ARGUMENT), an unknown codec (FAILED_PRECONDITION) and an existing actor without replace (ALREADY_EXISTS)", async () => {
    await turn("sess-w3", "count");
    const bytes = await actors.snapshot("sess-w3");
    const trailer = { sha256: sha256(bytes), size: BigInt(bytes.length), codec: "v8/1" };
    expect(
      isHostError(
        await failureOf(raw.restoreActorWhole({ header: { session: "sess-w3-a" }, data: bytes })),
        ErrorCode.DataLoss,
      ),
    ).toBe(true);
    expect(
      isHostError(await failureOf(raw.restoreActorWhole({ data: bytes, trailer })), ErrorCode.InvalidArgument),
    ).toBe(true);
    const codecErr = await failureOf(
      raw.restoreActorWhole({ header: { session: "sess-w3-b" }, data: bytes, trailer: { ...trailer, codec: "v9/1" } }),
    );
    expect(isHostError(codecErr, ErrorCode.FailedPrecondition)).toBe(true);
    expect(
      isHostError(
        await failureOf(raw.restoreActorWhole({ header: { session: "sess-w3" }, data: bytes, trailer })),
        ErrorCode.AlreadyExists,
      ),
    ).toBe(true);
    expect((await actors.list()).map((a) => a.session).filter((s) => s.startsWith("sess-w3-"))).toEqual([]);
    expect(await turn("sess-w3", "count")).toEqual(["count=2"]);
  });

  it("honours the header's instance name: a drop naming the replaced instance leaves the new one", async () => {
    await turn("sess-w4", "count");
    const bytes = await actors.snapshot("sess-w4");
    await actors.restore("sess-w4", bytes, { replace: true, instance: "old" });
    await actors.restore("sess-w4", bytes, { replace: true, instance: "new" });
    expect(await actors.drop("sess-w4", { instance: "old" })).toBe(false);
    expect(await turn("sess-w4", "count")).toEqual(["count=2"]);
  });
});

describe("ActorsClient chooses the restore call by what the node reported (§8.9)", () => {
  type Calls = { whole: number; stream: number };

  async function fakeNode(
    name: string,
    reports: boolean,
    serves: boolean,
  ): Promise<{ client: ActorsClient; calls: Calls; stop(): void }> {
    const calls: Calls = { whole: 0, stream: 0 };
    const impl: ServiceImpl<MethodsOf<typeof Actors>> = {
      async *snapshotActor() {},
      async restoreActor(reqs) {
        calls.stream += 1;
        let session = "";
        let size = 0n;
        for await (const r of reqs) {
          if (r.item.case === "header") session = r.item.value.session;
          else if (r.item.case === "chunk" && r.item.value.chunk.case === "data")
            size += BigInt(r.item.value.chunk.value.length);
        }
        return { session, size };
      },
      async restoreActorWhole(req) {
        if (!serves) throw new HostError(ErrorCode.Unimplemented, "RestoreActorWhole is not served here");
        calls.whole += 1;
        return { session: req.header?.session ?? "", size: BigInt(req.data.length) };
      },
      dropActor: () => ({ dropped: false }),
      putHistory: async () => {
        throw new HostError(ErrorCode.Unimplemented, "PutHistory is not served here");
      },
      listActors: () => ({ actors: [] }),
      nodeInfo: () => ({ pid: 1n, codecs: ["v8/1"], wholeRestore: reports }),
    };
    const server = new Server();
    addService(server, Actors, impl);
    const client = new ActorsClient({ address: await listen(server, `unix://${join(dir, `${name}.sock`)}`) });
    return {
      client,
      calls,
      stop: () => {
        client.close();
        server.forceShutdown();
      },
    };
  }

  it("streams until NodeInfo says whole_restore; then one unary call for a state up to WHOLE_RESTORE_MAX_BYTES, the stream above it", async () => {
    const node = await fakeNode("reports", true, true);
    try {
      expect(await node.client.restore("s", new Uint8Array(10))).toBe(10);
      expect(node.calls).toEqual({ whole: 0, stream: 1 });
      await node.client.nodeInfo();
      expect(await node.client.restore("s", new Uint8Array(WHOLE_RESTORE_MAX_BYTES))).toBe(WHOLE_RESTORE_MAX_BYTES);
      expect(node.calls).toEqual({ whole: 1, stream: 1 });
      expect(await node.client.restore("s", new Uint8Array(WHOLE_RESTORE_MAX_BYTES + 1))).toBe(
        WHOLE_RESTORE_MAX_BYTES + 1,
      );
      expect(node.calls).toEqual({ whole: 1, stream: 2 });
    } finally {
      node.stop();
    }
  });

  it("a node that does not report it only ever gets the stream", async () => {
    const node = await fakeNode("silent", false, true);
    try {
      await node.client.nodeInfo();
      await node.client.restore("s", new Uint8Array(10));
      expect(node.calls).toEqual({ whole: 0, stream: 1 });
    } finally {
      node.stop();
    }
  });

  it("UNIMPLEMENTED from a node that reported it falls back to the stream, once and for good", async () => {
    const node = await fakeNode("liar", true, false);
    try {
      await node.client.nodeInfo();
      expect(await node.client.restore("s", new Uint8Array(10))).toBe(10);
      expect(await node.client.restore("s", new Uint8Array(10))).toBe(10);
      expect(node.calls).toEqual({ whole: 0, stream: 2 });
    } finally {
      node.stop();
    }
  });
});
