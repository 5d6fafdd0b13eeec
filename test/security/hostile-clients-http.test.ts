// Hostile clients on the HTTP listener (docs/operations.md, "Limits"): requestMessages is checked on a
// request's bytes before connect-node decodes them, in every protocol the listener speaks (Connect binary
// and JSON, gRPC-Web, compressed or not), as on the gRPC listener; ordinary requests pass unchanged and the
// host stays up. Loopback only; every loop is bounded by count.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { compressionGzip, createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MessageSchema, PartSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ExecRequestSchema, Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { startFixture, userInput, type Fixture } from "../server/helpers.js";
import { healthServing } from "./hostile-helpers.js";

let f: Fixture;
beforeAll(async () => {
  f = await startFixture({ httpAddr: "127.0.0.1:0" });
});
afterAll(async () => {
  await f?.close();
});

const transports: Record<string, (baseUrl: string) => Transport> = {
  "Connect binary": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true }),
  "Connect JSON": (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
  "Connect binary, gzip": (baseUrl) =>
    createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true, sendCompression: compressionGzip }),
  "gRPC-Web binary": (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true }),
  "gRPC-Web JSON": (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false }),
};

async function execOver(transport: Transport, req: Parameters<ReturnType<typeof sessionsOf>["exec"]>[0]) {
  const updates: unknown[] = [];
  try {
    for await (const u of sessionsOf(transport).exec(req)) updates.push(u);
  } catch (err) {
    return { updates, error: ConnectError.from(err) };
  }
  return { updates, error: undefined };
}

function sessionsOf(transport: Transport) {
  return createClient(Sessions, transport);
}

describe("requestMessages on the HTTP listener", () => {
  const million = create(ExecRequestSchema, {
    harness: "echo",
    inputs: [
      create(MessageSchema, { role: "user", parts: Array.from({ length: 1_000_000 }, () => create(PartSchema, {})) }),
    ],
  });

  for (const [name, make] of Object.entries(transports)) {
    it(`aMillionEmptyPartsOverHttpIsRefusedBeforeDecoding (${name})`, async () => {
      const { error } = await execOver(make(f.server.httpUrl!), million);
      expect(error?.code).toBe(Code.ResourceExhausted);
      // Refused on its bytes, naming requestMessages (not inputParts, which is checked after decoding).
      expect(error?.rawMessage).toContain("requestMessages");
      await healthServing(f.server.addr);
    });

    it(`anOrdinaryExecOverHttpPassesTheBound (${name})`, async () => {
      const { updates, error } = await execOver(
        make(f.server.httpUrl!),
        create(ExecRequestSchema, { harness: "echo", inputs: [userInput("within bounds")] }),
      );
      expect(error).toBeUndefined();
      expect(updates.length).toBeGreaterThan(1);
    });
  }
});
