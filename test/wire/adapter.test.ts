// The grpc-js ⇄ protobuf-es adapter against real sockets (TCP loopback and a unix socket): every
// method kind, status-code round trips, deadlines, cancellation and metadata in both directions.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Metadata, Server, status as GrpcStatus } from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Harness } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { Actors, SnapshotActorRequestSchema } from "../../src/gen/harnesshost/v1/actors_pb.js";
import type { SnapshotChunk } from "../../src/gen/harnesshost/v1/actors_pb.js";
import { ErrorCode, HostError, isHostError } from "../../src/errors/index.js";
import { RpcError, addService, createClient, listen, parseAddress } from "../../src/wire/index.js";
import type { CallContext, MethodsOf, ServiceClient, ServiceImpl } from "../../src/wire/index.js";
import { bytesMethod } from "../../bench/lib/grpc-raw.js";

const ERROR_SESSIONS: Record<string, ErrorCode> = {
  "fail-not-found": ErrorCode.NotFound,
  "fail-aborted": ErrorCode.SessionBusy,
  "fail-precondition": ErrorCode.FailedPrecondition,
  "fail-data-loss": ErrorCode.DataLoss,
};

/** Resolves with the reason once a server-side signal fires. */
function abortedWith(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener("abort", () => resolve(signal.reason), { once: true });
  });
}

class Observed {
  readonly aborts: Promise<unknown>[] = [];
  /** Signals of calls that ended normally ("keep-signal"). */
  readonly finished: AbortSignal[] = [];
  #notify: ((p: Promise<unknown>) => void) | undefined;
  nextAbort(): Promise<unknown> {
    return new Promise((resolve) => {
      this.#notify = (p) => resolve(p);
    });
  }
  record(ctx: CallContext): void {
    const p = abortedWith(ctx.signal);
    this.aborts.push(p);
    this.#notify?.(p);
  }
}

function actorsImpl(observed: Observed): ServiceImpl<ActorsMethods> {
  return {
    async dropActor(req, ctx) {
      const code = ERROR_SESSIONS[req.session];
      if (code !== undefined) throw new HostError(code, `refused ${req.session}`);
      if (req.session === "plain-error") throw new Error("boom");
      const header = new Metadata();
      header.set("x-echo", ctx.metadata.get("x-token")[0]?.toString() ?? "none");
      ctx.sendHeader(header);
      ctx.trailers.set("x-trailer", `dropped:${req.session}`);
      return { dropped: req.session === "present" };
    },
    async listActors(_req, ctx) {
      observed.record(ctx);
      await abortedWith(ctx.signal);
      return { actors: [] };
    },
    async nodeInfo() {
      return { pid: BigInt(process.pid), codecs: ["v8/1"] };
    },
    async putHistory() {
      throw new HostError(ErrorCode.Unimplemented, "PutHistory is not served here");
    },
    async *snapshotActor(req, ctx) {
      if (req.session === "wait-cancel") {
        observed.record(ctx);
        yield { chunk: { case: "data", value: new Uint8Array([1]) } };
        await abortedWith(ctx.signal);
        return;
      }
      if (req.session === "keep-signal") observed.finished.push(ctx.signal);
      const count = req.session === "big" ? 40 : 3;
      const size = req.session === "big" ? 256 * 1024 : 4;
      for (let i = 0; i < count; i++) {
        yield { chunk: { case: "data", value: new Uint8Array(size).fill(i) } };
      }
      yield { chunk: { case: "trailer", value: { size: BigInt(count * size), codec: "test" } } };
    },
    async restoreActor(reqs) {
      let session = "";
      let size = 0n;
      for await (const r of reqs) {
        if (r.item.case === "header") session = r.item.value.session;
        else if (r.item.case === "chunk" && r.item.value.chunk.case === "data") {
          size += BigInt(r.item.value.chunk.value.length);
        }
      }
      if (session === "") throw new HostError(ErrorCode.InvalidArgument, "header first");
      return { session, size };
    },
    async restoreActorWhole(req) {
      return { session: req.header?.session ?? "", size: BigInt(req.data.length) };
    },
  };
}
type ActorsMethods = MethodsOf<typeof Actors>;

const harnessImpl: ServiceImpl<HarnessMethods> = {
  describe() {
    return { id: "echo", version: "1" };
  },
  async *connect(frames) {
    for await (const f of frames) {
      yield {
        executionId: f.executionId,
        kind: EventKind.EVENT_OUTPUT,
        body: { case: "message", value: { role: "assistant" } },
      };
    }
  },
};
type HarnessMethods = MethodsOf<typeof Harness>;

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function rpcError(p: Promise<unknown>): Promise<RpcError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RpcError);
  return err as RpcError;
}

const dir = mkdtempSync(join(tmpdir(), "hh-wire-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("parseAddress", () => {
  it("accepts the supported forms", () => {
    expect(parseAddress("localhost:50051")).toMatchObject({ kind: "tcp", host: "localhost", port: 50051 });
    expect(parseAddress("[::1]:0")).toMatchObject({ kind: "tcp", host: "::1", port: 0, target: "[::1]:0" });
    expect(parseAddress("unix:///tmp/a.sock")).toMatchObject({ kind: "unix", path: "/tmp/a.sock" });
    expect(parseAddress("unix:rel/a.sock")).toMatchObject({
      kind: "unix",
      path: "rel/a.sock",
      target: "unix:rel/a.sock",
    });
    expect(parseAddress("dns:///example.com:443")).toMatchObject({ kind: "tcp", host: "example.com", port: 443 });
  });
  it.each([
    "http://localhost:80",
    "https://x:443",
    "tcp:host:1",
    "foo:bar",
    "localhost",
    "::1:80",
    "h:99999",
    "unix://rel",
    "unix:",
  ])("refuses %s with InvalidArgument", (addr) => {
    expect(() => parseAddress(addr)).toThrow(HostError);
    try {
      parseAddress(addr);
    } catch (e) {
      expect(isHostError(e, ErrorCode.InvalidArgument)).toBe(true);
    }
  });
  it("names the unsupported scheme", () => {
    expect(() => parseAddress("https://x:443")).toThrow(/unsupported scheme/);
  });
});

describe.each([
  ["tcp", () => "127.0.0.1:0"],
  ["unix", () => `unix://${join(dir, "adapter.sock")}`],
])("adapter over %s", (_name, addr) => {
  const observed = new Observed();
  let server: Server;
  let actors: ServiceClient<ActorsMethods>;
  let harness: ServiceClient<HarnessMethods>;

  beforeAll(async () => {
    server = new Server();
    addService(server, Actors, actorsImpl(observed));
    addService(server, Harness, harnessImpl);
    const bound = await listen(server, addr());
    actors = createClient(Actors, bound);
    harness = createClient(Harness, bound);
  });
  afterAll(() => {
    actors.close();
    harness.close();
    server.forceShutdown();
  });

  it("resolves port 0 to the real port", async () => {
    const s = new Server();
    addService(s, Harness, harnessImpl);
    const bound = await listen(s, "127.0.0.1:0");
    s.forceShutdown();
    expect(bound).toMatch(/^127\.0\.0\.1:[1-9][0-9]*$/);
  });

  it("unary with metadata both ways", async () => {
    let header: Metadata | undefined;
    let trailer: Metadata | undefined;
    const res = await actors.dropActor(
      { session: "present" },
      { metadata: { "x-token": "t-1" }, onHeader: (m) => (header = m), onTrailer: (m) => (trailer = m) },
    );
    expect(res.dropped).toBe(true);
    expect(header?.get("x-echo")).toEqual(["t-1"]);
    expect(trailer?.get("x-trailer")).toEqual(["dropped:present"]);
    expect((await actors.nodeInfo({})).pid).toBe(BigInt(process.pid));
  });

  it("a call that ends with its status leaves the handler's signal unaborted after the stream closes", async () => {
    // grpc-js reports every stream close as 'cancelled', a normal one too; only a close before the
    // status may abort the handler (building a CANCELLED error on every call was measurable per turn).
    await collect(actors.snapshotActor({ session: "keep-signal" }));
    for (let i = 0; i < 5; i++) await actors.nodeInfo({}); // later calls on the channel: the first stream's close is processed by now
    const signal = observed.finished.at(-1);
    expect(signal).toBeDefined();
    expect(signal?.aborted).toBe(false);
  });

  it("server stream delivers every message in order, then completes", async () => {
    const chunks = await collect(actors.snapshotActor({ session: "s" }));
    expect(chunks.map((c) => c.chunk.case)).toEqual(["data", "data", "data", "trailer"]);
    const big = await collect(actors.snapshotActor(create(SnapshotActorRequestSchema, { session: "big" })));
    expect(big).toHaveLength(41);
    big.slice(0, 40).forEach((c: SnapshotChunk, i) => {
      expect(c.chunk.case === "data" && c.chunk.value.length === 256 * 1024 && c.chunk.value[0] === i).toBe(true);
    });
  });

  it("client stream", async () => {
    async function* frames() {
      yield { item: { case: "header" as const, value: { session: "r1" } } };
      yield {
        item: { case: "chunk" as const, value: { chunk: { case: "data" as const, value: new Uint8Array(10) } } },
      };
      yield { item: { case: "chunk" as const, value: { chunk: { case: "data" as const, value: new Uint8Array(5) } } } };
    }
    const res = await actors.restoreActor(frames());
    expect(res.session).toBe("r1");
    expect(res.size).toBe(15n);
    const err = await rpcError(actors.restoreActor((async function* () {})()));
    expect(err.grpcCode).toBe(GrpcStatus.INVALID_ARGUMENT);
  });

  it("bidi: each request answered, stream ends after the client half-closes", async () => {
    const call = harness.connect();
    const seen: string[] = [];
    await call.send({ executionId: "a" });
    const it = call[Symbol.asyncIterator]();
    const first = await it.next();
    seen.push(first.done === true ? "" : first.value.executionId);
    await call.send({ executionId: "b" });
    call.end();
    for (let r = await it.next(); r.done !== true; r = await it.next()) seen.push(r.value.executionId);
    expect(seen).toEqual(["a", "b"]);
    expect((await harness.describe({})).id).toBe("echo");
  });

  it.each(Object.entries(ERROR_SESSIONS))("HostError %s round-trips as its gRPC status", async (session, code) => {
    const err = await rpcError(actors.dropActor({ session }));
    expect(err.details).toBe(`refused ${session}`);
    expect(err.message).toBe(`refused ${session}`);
    const expected = {
      [ErrorCode.NotFound]: [GrpcStatus.NOT_FOUND, ErrorCode.NotFound],
      [ErrorCode.SessionBusy]: [GrpcStatus.ABORTED, ErrorCode.Conflict],
      [ErrorCode.FailedPrecondition]: [GrpcStatus.FAILED_PRECONDITION, ErrorCode.FailedPrecondition],
      [ErrorCode.DataLoss]: [GrpcStatus.DATA_LOSS, ErrorCode.DataLoss],
    }[code as string];
    expect([err.grpcCode, err.code]).toEqual(expected);
  });

  it("a plain error becomes INTERNAL", async () => {
    const err = await rpcError(actors.dropActor({ session: "plain-error" }));
    expect(err.grpcCode).toBe(GrpcStatus.INTERNAL);
    expect(err.code).toBe(ErrorCode.Internal);
  });

  it("deadline exceeded reaches the client as DEADLINE_EXCEEDED and the server's signal", async () => {
    const aborted = observed.nextAbort();
    const err = await rpcError(actors.listActors({}, { timeoutMs: 100 }));
    expect(err.grpcCode).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    expect(err.code).toBe(ErrorCode.DeadlineExceeded);
    const reason = await await aborted;
    expect(isHostError(reason, ErrorCode.DeadlineExceeded)).toBe(true);
  });

  it("a client cancel fires the server's signal and fails the client with Cancelled", async () => {
    const aborted = observed.nextAbort();
    const ac = new AbortController();
    const seen: number[] = [];
    const run = (async () => {
      for await (const c of actors.snapshotActor({ session: "wait-cancel" }, { signal: ac.signal })) {
        if (c.chunk.case === "data") seen.push(c.chunk.value.length);
        ac.abort();
      }
    })();
    const err = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isHostError(err, ErrorCode.Cancelled)).toBe(true);
    expect(seen).toEqual([1]);
    const reason = await await aborted;
    expect(isHostError(reason, ErrorCode.Cancelled)).toBe(true);
  });

  it("aServerStreamWhoseSignalHasAlreadyAbortedFailsCancelled, and nothing reaches the server", async () => {
    const before = observed.aborts.length;
    const err = await collect(actors.snapshotActor({ session: "wait-cancel" }, { signal: AbortSignal.abort() })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isHostError(err, ErrorCode.Cancelled)).toBe(true);
    await actors.nodeInfo({}); // answered after anything sent before it on this connection was dispatched
    expect(observed.aborts.length).toBe(before);
  });

  it("aServerStreamWhoseConsumerStopsEarlyIsCancelled: leaving the loop cancels the call, the server's signal fires", async () => {
    const aborted = observed.nextAbort();
    for await (const c of actors.snapshotActor({ session: "wait-cancel" })) {
      expect(c.chunk.case).toBe("data");
      break;
    }
    const reason = await await aborted;
    expect(isHostError(reason, ErrorCode.Cancelled)).toBe(true);
  });

  it("aServerStreamPastItsDeadlineEndsDeadlineExceeded on the client and fires the server's signal", async () => {
    const aborted = observed.nextAbort();
    const err = await rpcError(collect(actors.snapshotActor({ session: "wait-cancel" }, { timeoutMs: 100 })));
    expect(err.grpcCode).toBe(GrpcStatus.DEADLINE_EXCEEDED);
    const reason = await await aborted;
    expect(isHostError(reason, ErrorCode.DeadlineExceeded)).toBe(true);
  });

  it("aServerStreamResponseThatCannotBeDecodedEndsTheCallInternal, after the responses before it", async () => {
    // A server that answers SnapshotActor with one good chunk, then bytes that are no SnapshotChunk.
    const raw = new Server();
    raw.addService(
      { snapshotActor: bytesMethod("/harnesshost.v1.Actors/SnapshotActor", false, true) },
      {
        snapshotActor: (call: { write(b: Buffer): void; end(): void }) => {
          call.write(Buffer.from([0x0a, 0x01, 0x07])); // chunk.data = [7]
          call.write(Buffer.from([0xff, 0xff, 0xff, 0xff]));
          call.end();
        },
      },
    );
    const client = createClient(Actors, await listen(raw, "127.0.0.1:0"));
    try {
      const seen: string[] = [];
      const err = await rpcError(
        (async () => {
          for await (const c of client.snapshotActor({ session: "s" })) seen.push(c.chunk.case ?? "none");
        })(),
      );
      expect(err.grpcCode).toBe(GrpcStatus.INTERNAL);
      expect(err.details).toMatch(/^Response message parsing error/);
      expect(seen).toEqual(["data"]);
    } finally {
      client.close();
      raw.forceShutdown();
    }
  });
});
