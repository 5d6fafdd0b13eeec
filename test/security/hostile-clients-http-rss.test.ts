// Hostile clients on the HTTP listener of a real `harnesshost serve` child process, with its memory
// watched, as hostile-clients-rss.test.ts does on the gRPC listener: huge, compressed-huge, many-part
// and several-envelope Connect and gRPC-Web Execs, and Connect clients that never read their Exec
// stream, each get their limit's status, health still answers, and the host's peak resident memory
// (VmHWM, reset before each case) stays within the same HOST_RSS_BUDGET. Default limits; loopback only;
// every loop is bounded by count. The assertions are memory budgets, never times.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { compressionGzip, createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MessageSchema, PartSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { type ExecRequestSchema, Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { DEFAULT_LIMITS } from "../../src/limits/index.js";
import { BIN, ServeProcess } from "../reliability/serve-process.js";
import { userInput } from "../server/helpers.js";
import { HOST_RSS_BUDGET, REPEAT, STALLED_BUDGET, STALLED_CLIENTS, withinRssBudget } from "./hostile-helpers.js";
import {
  envelope,
  envelopedHeaders,
  execBytes,
  gzip,
  manyPartsBytes,
  OK,
  rawRequest,
  stalledConnectExec,
} from "./http-raw.js";

let dir = "";
let serve: ServeProcess | undefined;
let httpUrl = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-hostile-http-rss-"));
  let stderr = "";
  serve = await ServeProcess.start({
    args: [
      "--data",
      join(dir, "data"),
      "--addr",
      "127.0.0.1:0",
      "--registry-addr",
      "off",
      "--http-addr",
      "127.0.0.1:0",
      "--log-level",
      "warn",
    ],
    onStderr: (chunk) => {
      stderr += chunk;
    },
  });
  httpUrl = /harnesshost listening .* console=(\S+)/.exec(stderr)?.[1] ?? "";
  expect(httpUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
}, 120_000);

afterAll(async () => {
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function withinBudget(name: string, hostile: () => Promise<void>, budget = HOST_RSS_BUDGET): Promise<void> {
  return withinRssBudget({ pid: serve?.pid ?? 0, addr: serve?.addr ?? "" }, name, hostile, budget);
}

const transports = {
  connect: (): Transport => createConnectTransport({ baseUrl: httpUrl, httpVersion: "1.1", useBinaryFormat: true }),
  connectGzip: (): Transport =>
    createConnectTransport({
      baseUrl: httpUrl,
      httpVersion: "1.1",
      useBinaryFormat: true,
      sendCompression: compressionGzip,
    }),
  grpcWebGzip: (): Transport =>
    createGrpcWebTransport({
      baseUrl: httpUrl,
      httpVersion: "1.1",
      useBinaryFormat: true,
      sendCompression: compressionGzip,
    }),
};

/** The Exec's code (OK when it ended well) and message, read to its end. */
async function execOver(
  transport: Transport,
  req: MessageInitShape<typeof ExecRequestSchema>,
): Promise<{ code: number; message: string }> {
  try {
    for await (const _ of createClient(Sessions, transport).exec(req)) {
      // read, not kept
    }
  } catch (err) {
    const e = ConnectError.from(err);
    return { code: e.code, message: e.rawMessage };
  }
  return { code: OK, message: "" };
}

describe("hostile clients over HTTP: the served host's memory", () => {
  it("hugeConnectExecsKeepTheHostWithinItsRssBudget", async () => {
    await withinBudget("http huge", async () => {
      const overInput = userInput("x".repeat(DEFAULT_LIMITS.inputBytes + 1));
      // Past requestBytes: sent whole, and gzipped to a few KiB (a zip bomb for the host).
      const overRequest = userInput("x".repeat(DEFAULT_LIMITS.requestBytes + 1));
      for (let i = 0; i < REPEAT; i++) {
        const input = await execOver(transports.connect(), { harness: "echo", inputs: [overInput] });
        expect(input).toMatchObject({ code: Code.ResourceExhausted, message: expect.stringContaining("inputBytes") });
        for (const make of Object.values(transports)) {
          const request = await execOver(make(), { harness: "echo", inputs: [overRequest] });
          expect(request).toMatchObject({
            code: Code.ResourceExhausted,
            message: expect.stringContaining("requestBytes"),
          });
        }
      }
      // Accepted inputs just under the limit, a new session each.
      const under = userInput("u".repeat(DEFAULT_LIMITS.inputBytes - 64));
      for (let i = 0; i < REPEAT; i++) {
        expect((await execOver(transports.connect(), { harness: "echo", inputs: [under] })).code).toBe(OK);
      }
    });
  }, 300_000);

  it("manyPartConnectRequestsKeepTheHostWithinItsRssBudget", async () => {
    await withinBudget("http many-part", async () => {
      const input = create(MessageSchema, {
        role: "user",
        parts: Array.from({ length: 1_000_000 }, () => create(PartSchema, {})),
      });
      for (let round = 0; round < REPEAT / 4; round++) {
        const four = await Promise.all(
          [transports.connect, transports.connectGzip, transports.grpcWebGzip, transports.connect].map((make) =>
            execOver(make(), { harness: "echo", inputs: [input] }),
          ),
        );
        for (const res of four) {
          expect(res).toMatchObject({
            code: Code.ResourceExhausted,
            message: expect.stringContaining("requestMessages"),
          });
        }
      }
      // One ordinary envelope, then 200 gzip envelopes of a million empty parts each.
      const first = envelope(gzip(execBytes("first")), true);
      const bomb = envelope(gzip(manyPartsBytes(1_000_000)), true);
      const body = Buffer.concat([first, ...Array.from({ length: 200 }, () => bomb)]);
      for (let round = 0; round < REPEAT / 4; round++) {
        const four = await Promise.all(
          [envelopedHeaders.connect, envelopedHeaders.grpcWeb, envelopedHeaders.connect, envelopedHeaders.grpcWeb].map(
            (headers) => rawRequest(httpUrl, "POST", "/agentsessions.v1.Sessions/Exec", headers(true), body),
          ),
        );
        for (const res of four) expect(res.code).toBe(Code.Unimplemented);
      }
    });
  }, 300_000);

  // Last: the host keeps what V8 took for the stalled streams, which would count against the next case.
  it("neverReadingConnectClientsKeepTheHostWithinItsRssBudget", async () => {
    const sessions = createClient(Sessions, transports.connect());
    await withinBudget(
      "http never-reading",
      async () => {
        const text = "q".repeat(DEFAULT_LIMITS.inputBytes - 64);
        const stalled = [];
        for (let i = 0; i < STALLED_CLIENTS; i++) {
          const s = await sessions.createSession({ session: { harness: "echo" } });
          stalled.push(stalledConnectExec(httpUrl, s.metadata?.uid ?? "", text));
        }
        // Every stalled turn still commits and frees its session (read to its end, bounded by count).
        for (const c of stalled) {
          const end = await c.readToEnd();
          expect([OK, Code.ResourceExhausted]).toContain(end.code);
        }
      },
      HOST_RSS_BUDGET + STALLED_BUDGET,
    );
  }, 300_000);

  it("everyJournalStillVerifiesAfterTheHostileHttpClients", async () => {
    await serve?.stop();
    const { stdout } = await promisify(execFile)(process.execPath, [BIN, "verify", "--data", join(dir, "data")], {
      timeout: 120_000,
    });
    expect(stdout.trim().split("\n").at(-1)).toMatch(/^(\d+)\/\1 sessions intact$/);
  }, 180_000);
});
