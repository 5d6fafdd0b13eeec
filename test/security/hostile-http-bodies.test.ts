// Hostile request bodies on the HTTP listener (docs/operations.md, "Limits" and "The HTTP listener"):
// a request carries exactly one message, so a body of several envelopes is refused before any of them
// is decompressed; a message that is, or decompresses to, more than requestBytes is refused
// RESOURCE_EXHAUSTED naming requestBytes; and the listener answers RPC paths over POST only, so no
// message ever arrives in a query string. Each case asserts the status, that health answers and that
// nothing was journaled. Loopback only; every loop is bounded by count.
import { Agent } from "node:http";
import { create } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import {
  compressionBrotli,
  compressionGzip,
  createConnectTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionSchema, Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { startHttp } from "../../src/http/server.js";
import { DEFAULT_LIMITS } from "../../src/limits/index.js";
import { startFixture, userInput, type Fixture } from "../server/helpers.js";
import { healthServing } from "./hostile-helpers.js";
import { envelope, envelopedHeaders, execBytes, gzip, manyPartsBytes, OK, rawRequest } from "./http-raw.js";

let f: Fixture;
beforeAll(async () => {
  f = await startFixture({ httpAddr: "127.0.0.1:0" });
});
afterAll(async () => {
  await f?.close();
});

const EXEC_PATH = "/agentsessions.v1.Sessions/Exec";
/** Envelopes after the first in one hostile body. */
const EXTRA_ENVELOPES = 200;

/** Runs `hostile` and asserts health answers and no session was journaled by it. */
async function journalsNothing(hostile: () => Promise<void>): Promise<void> {
  const before = (await f.host.journal.allSessionUids()).length;
  await hostile();
  await healthServing(f.server.addr);
  expect((await f.host.journal.allSessionUids()).length).toBe(before);
}

const protocols = {
  Connect: envelopedHeaders.connect,
  "gRPC-Web": envelopedHeaders.grpcWeb,
} as const;

describe("several envelopes in one body", () => {
  // Each extra envelope: a million empty parts (2 MB, requestMessages twenty times over), gzipped to a few KiB.
  const bomb = envelope(gzip(manyPartsBytes(1_000_000)), true);
  const first = envelope(gzip(execBytes("first")), true);

  for (const [name, headers] of Object.entries(protocols)) {
    it(`manyGzipEnvelopesInOneBodyAreRefusedBeforeAnyIsDecompressed (${name})`, async () => {
      const body = Buffer.concat([first, ...Array.from({ length: EXTRA_ENVELOPES }, () => bomb)]);
      await journalsNothing(async () => {
        const answer = await rawRequest(f.server.httpUrl!, "POST", EXEC_PATH, headers(true), body);
        expect(answer.code).toBe(Code.Unimplemented);
        expect(answer.message).toContain("more than one message");
      });
    });

    it(`aSecondEnvelopeIsRefusedWithoutBeingDecompressed (${name})`, async () => {
      // The second envelope would expand past requestBytes (refused RESOURCE_EXHAUSTED if it were
      // decompressed) and the third is not gzip at all: neither is looked into.
      const zipBomb = envelope(gzip(Buffer.alloc(DEFAULT_LIMITS.requestBytes * 2)), true);
      const garbage = envelope(Buffer.from("not gzip"), true);
      await journalsNothing(async () => {
        const answer = await rawRequest(
          f.server.httpUrl!,
          "POST",
          EXEC_PATH,
          headers(true),
          Buffer.concat([first, zipBomb, garbage]),
        );
        expect(answer.code).toBe(Code.Unimplemented);
        expect(answer.message).toContain("more than one message");
      });
    });

    it(`aRefusedBodyLeavesItsConnectionUsable (${name})`, async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const body = Buffer.concat([first, ...Array.from({ length: EXTRA_ENVELOPES }, () => bomb)]);
        const url = f.server.httpUrl!;
        const sockets = new Set<unknown>();
        agent.on("free", (socket) => sockets.add(socket));
        expect((await rawRequest(url, "POST", EXEC_PATH, headers(true), body, agent)).code).toBe(Code.Unimplemented);
        expect((await rawRequest(url, "POST", EXEC_PATH, headers(true), first, agent)).code).toBe(OK);
        // Both calls went over the one connection.
        expect(sockets.size).toBe(1);
      } finally {
        agent.destroy();
      }
    });

    it(`oneEnvelopeStillPasses (${name})`, async () => {
      const answer = await rawRequest(f.server.httpUrl!, "POST", EXEC_PATH, headers(true), first);
      expect(answer.code).toBe(OK);
    });
  }
});

describe("requestBytes on the HTTP listener", () => {
  const transports: Record<string, (baseUrl: string) => Transport> = {
    "Connect binary": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true }),
    "Connect binary, gzip": (baseUrl) =>
      createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true, sendCompression: compressionGzip }),
    "Connect JSON, br": (baseUrl) =>
      createConnectTransport({ baseUrl, httpVersion: "1.1", sendCompression: compressionBrotli }),
    "gRPC-Web binary, gzip": (baseUrl) =>
      createGrpcWebTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true, sendCompression: compressionGzip }),
  };
  // Compresses to a few KiB; decompressed it is past requestBytes.
  const over = "x".repeat(DEFAULT_LIMITS.requestBytes + 1024);

  for (const [name, make] of Object.entries(transports)) {
    it(`aMessageOverRequestBytesIsRefusedNamingIt (${name}, Exec)`, async () => {
      await journalsNothing(async () => {
        const sessions = createClient(Sessions, make(f.server.httpUrl!));
        const error = await (async () => {
          for await (const _ of sessions.exec({ harness: "echo", inputs: [userInput(over)] })) {
            // nothing is expected
          }
        })().then(
          () => undefined,
          (err: unknown) => ConnectError.from(err),
        );
        expect(error?.code).toBe(Code.ResourceExhausted);
        expect(error?.rawMessage).toContain("requestBytes");
      });
    });

    it(`aMessageOverRequestBytesIsRefusedNamingIt (${name}, unary CreateSession)`, async () => {
      await journalsNothing(async () => {
        const sessions = createClient(Sessions, make(f.server.httpUrl!));
        const error = await sessions.createSession({ session: { harness: "echo", annotations: { note: over } } }).then(
          () => undefined,
          (err: unknown) => ConnectError.from(err),
        );
        expect(error?.code).toBe(Code.ResourceExhausted);
        expect(error?.rawMessage).toContain("requestBytes");
      });
    });
  }

  it("aGzipBombEnvelopeIsRefusedNamingRequestBytes (raw gRPC-Web)", async () => {
    const bomb = envelope(gzip(Buffer.alloc(DEFAULT_LIMITS.requestBytes * 64)), true);
    await journalsNothing(async () => {
      const answer = await rawRequest(f.server.httpUrl!, "POST", EXEC_PATH, envelopedHeaders.grpcWeb(true), bomb);
      expect(answer.code).toBe(Code.ResourceExhausted);
      expect(answer.message).toContain("requestBytes");
    });
  });
});

describe("RPC paths answer POST only", () => {
  it("aGetOnAnRpcPathIsRefusedBeforeItsQueryIsRead", async () => {
    // Within Node's 16 KiB header limit, and past requestBytes once decompressed.
    const message = gzip(Buffer.alloc(DEFAULT_LIMITS.requestBytes * 2)).toString("base64url");
    const query = `connect=v1&encoding=proto&base64=1&compression=gzip&message=${message}`;
    await journalsNothing(async () => {
      for (const method of ["GetSession", "ListSessions", "Exec", "Replay"]) {
        const answer = await rawRequest(f.server.httpUrl!, "GET", `/agentsessions.v1.Sessions/${method}?${query}`, {});
        expect(answer.httpStatus, method).toBe(405);
        expect(answer.headers["allow"]).toBe("POST");
        expect(answer.message).toContain("POST only");
      }
    });
  });

  it("aGetIsRefusedEvenForAMethodMarkedWithoutSideEffects", async () => {
    // connect-node itself serves GET for such a method; the listener refuses it whatever the marking.
    const marked = { ...Sessions.method.getSession, idempotency: MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS };
    const http = await startHttp({
      addr: "127.0.0.1:0",
      secured: false,
      interceptors: [],
      requestBytes: DEFAULT_LIMITS.requestBytes,
      routes: (router) => {
        router.rpc(marked, () => create(SessionSchema, {}));
      },
    });
    try {
      const path = `/agentsessions.v1.Sessions/GetSession`;
      const get = await rawRequest(http.url, "GET", `${path}?connect=v1&encoding=json&message=%7B%7D`, {});
      expect(get.httpStatus).toBe(405);
      const post = await rawRequest(
        http.url,
        "POST",
        path,
        { "content-type": "application/json", "connect-protocol-version": "1" },
        Buffer.from("{}"),
      );
      expect(post.code).toBe(OK);
    } finally {
      await http.close(0);
    }
  });
});
