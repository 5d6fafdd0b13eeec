// Compressed request bodies on the HTTP listener (src/http/decode-bound.ts): a gzip or br message is
// decompressed once, by the host's check, and handed to connect-node decompressed, in Connect unary,
// Connect streaming and gRPC-Web alike; the call is answered as before, and the response is compressed
// as the client's accept-encoding (or, naming none, its request's encoding) asks. Decompressions are
// counted by requestDecompressions (the host's and connect-node's); no timing is observed.
import { brotliCompressSync, brotliDecompressSync, gunzipSync } from "node:zlib";
import { create, fromBinary, toBinary, toJsonString } from "@bufbuild/protobuf";
import { createClient, type Transport } from "@connectrpc/connect";
import {
  compressionBrotli,
  compressionGzip,
  createConnectTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CreateSessionRequestSchema,
  ExecUpdateSchema,
  SessionSchema,
  Sessions,
} from "../../src/gen/agentsessions/v1/session_pb.js";
import { requestDecompressions } from "../../src/http/decode-bound.js";
import { envelope, envelopedHeaders, envelopesOf, execBytes, gzip, OK, rawRequest } from "../security/http-raw.js";
import { startFixture, userInput, type Fixture } from "../server/helpers.js";

let f: Fixture;
beforeAll(async () => {
  f = await startFixture({ httpAddr: "127.0.0.1:0" });
});
afterAll(async () => {
  await f?.close();
});

/** Decompressions `call` caused (the host's and connect-node's), with what it returned. */
async function decompressionsOf<T>(call: () => Promise<T>): Promise<{ result: T; decompressions: number }> {
  const before = requestDecompressions.count;
  const result = await call();
  return { result, decompressions: requestDecompressions.count - before };
}

/** Past connect's compressMinBytes (1 KiB) both ways, so requests and responses are compressed. */
const NOTE = "n".repeat(8 * 1024);
const compressors = {
  gzip: { compress: gzip, decompress: (b: Uint8Array) => gunzipSync(b) },
  br: { compress: (b: Uint8Array) => brotliCompressSync(b), decompress: (b: Uint8Array) => brotliDecompressSync(b) },
} as const;

const CREATE_PATH = "/agentsessions.v1.Sessions/CreateSession";
const EXEC_PATH = "/agentsessions.v1.Sessions/Exec";

describe("Connect unary", () => {
  const request = toBinary(
    CreateSessionRequestSchema,
    create(CreateSessionRequestSchema, { session: { harness: "echo", annotations: { note: NOTE } } }),
  );

  for (const encoding of ["gzip", "br"] as const) {
    const codec = compressors[encoding];
    for (const [accepts, expected] of [
      [undefined, encoding],
      ["gzip", "gzip"],
      ["br", "br"],
    ] as const) {
      it(`aCompressedUnaryBodyIsDecompressedOnceAndAnsweredCompressedAsAccepted (${encoding}, accept-encoding ${accepts ?? "absent"})`, async () => {
        const body = codec.compress(request);
        const { result: answer, decompressions } = await decompressionsOf(() =>
          rawRequest(
            f.server.httpUrl!,
            "POST",
            CREATE_PATH,
            {
              "content-type": "application/proto",
              "connect-protocol-version": "1",
              "content-encoding": encoding,
              "content-length": String(body.byteLength),
              ...(accepts === undefined ? {} : { "accept-encoding": accepts }),
            },
            body,
          ),
        );
        expect(answer.httpStatus).toBe(200);
        expect(decompressions).toBe(1);
        expect(answer.headers["content-encoding"]).toBe(expected);
        const session = fromBinary(SessionSchema, compressors[expected].decompress(answer.body));
        expect(session.annotations["note"]).toBe(NOTE);
        expect(session.metadata?.uid ?? "").not.toBe("");
      });
    }
  }

  it("anUncompressedUnaryBodyIsNotDecompressedAndItsAnswerIsCompressedWhenAccepted", async () => {
    const { result: answer, decompressions } = await decompressionsOf(() =>
      rawRequest(
        f.server.httpUrl!,
        "POST",
        CREATE_PATH,
        { "content-type": "application/proto", "connect-protocol-version": "1", "accept-encoding": "gzip" },
        request,
      ),
    );
    expect(answer.httpStatus).toBe(200);
    expect(decompressions).toBe(0);
    expect(answer.headers["content-encoding"]).toBe("gzip");
    expect(fromBinary(SessionSchema, gunzipSync(answer.body)).annotations["note"]).toBe(NOTE);
  });

  it("aCorruptGzipUnaryBodyIsStillRefusedByConnectNode", async () => {
    const { result: answer } = await decompressionsOf(() =>
      rawRequest(
        f.server.httpUrl!,
        "POST",
        CREATE_PATH,
        { "content-type": "application/proto", "connect-protocol-version": "1", "content-encoding": "gzip" },
        Buffer.from("not gzip at all"),
      ),
    );
    expect(answer.httpStatus).not.toBe(200);
    expect(answer.message).toContain("decompression failed");
  });
});

describe("enveloped (Connect streaming, gRPC-Web)", () => {
  const text = `hello ${NOTE}`;
  const protocols = {
    Connect: { headers: envelopedHeaders.connect, accept: "connect-accept-encoding", sent: "connect-content-encoding" },
    "gRPC-Web": { headers: envelopedHeaders.grpcWeb, accept: "grpc-accept-encoding", sent: "grpc-encoding" },
  } as const;

  for (const [name, protocol] of Object.entries(protocols)) {
    it(`aCompressedEnvelopeIsDecompressedOnceAndAnsweredCompressedAsAccepted (${name}, gzip)`, async () => {
      const { result: answer, decompressions } = await decompressionsOf(() =>
        rawRequest(
          f.server.httpUrl!,
          "POST",
          EXEC_PATH,
          { ...protocol.headers(true), [protocol.accept]: "gzip" },
          envelope(gzip(execBytes(text)), true),
        ),
      );
      expect(answer.code).toBe(OK);
      expect(decompressions).toBe(1);
      expect(answer.headers[protocol.sent]).toBe("gzip");
      // The echo's updates come back in compressed envelopes, and one of them carries the text.
      const texts = envelopesOf(answer.body)
        .filter(([flags]) => (flags & 0x82) === 0)
        .map(([flags, payload]) => ((flags & 1) === 1 ? gunzipSync(payload) : payload))
        .map((bytes) => toJsonString(ExecUpdateSchema, fromBinary(ExecUpdateSchema, bytes)));
      expect(texts.some((t) => t.includes(text))).toBe(true);
    });
  }
});

describe("typed clients", () => {
  const transports: Record<string, (baseUrl: string) => Transport> = {
    "Connect binary, gzip": (baseUrl) =>
      createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true, sendCompression: compressionGzip }),
    "Connect JSON, br": (baseUrl) =>
      createConnectTransport({ baseUrl, httpVersion: "1.1", sendCompression: compressionBrotli }),
    "gRPC-Web binary, gzip": (baseUrl) =>
      createGrpcWebTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true, sendCompression: compressionGzip }),
    "gRPC-Web binary, br": (baseUrl) =>
      createGrpcWebTransport({
        baseUrl,
        httpVersion: "1.1",
        useBinaryFormat: true,
        sendCompression: compressionBrotli,
      }),
  };

  for (const [name, make] of Object.entries(transports)) {
    it(`aCompressedRequestIsDecompressedOnce (${name}, unary CreateSession)`, async () => {
      const sessions = createClient(Sessions, make(f.server.httpUrl!));
      const { result: session, decompressions } = await decompressionsOf(() =>
        sessions.createSession({ session: { harness: "echo", annotations: { note: NOTE } } }),
      );
      expect(decompressions).toBe(1);
      expect(session.annotations["note"]).toBe(NOTE);
    });

    it(`aCompressedRequestIsDecompressedOnce (${name}, server-streaming Exec)`, async () => {
      const sessions = createClient(Sessions, make(f.server.httpUrl!));
      const text = `hello ${NOTE}`;
      const { result: updates, decompressions } = await decompressionsOf(async () => {
        const out: string[] = [];
        for await (const u of sessions.exec({ harness: "echo", inputs: [userInput(text)] })) {
          out.push(toJsonString(ExecUpdateSchema, u));
        }
        return out;
      });
      expect(decompressions).toBe(1);
      expect(updates.some((u) => u.includes(text))).toBe(true);
    });
  }
});
