// Bad input (SPEC §14): every Sessions and HarnessRegistry RPC fuzzed with fast-check — typed messages
// with hostile field values (huge and lone-surrogate strings, negative and overflowing int64s, unknown
// enums) and raw bytes that are not valid protobuf (garbage, wrong wire types, truncations, oversize).
// Every answer carries a documented status code, a refused request leaves the journal as it was, and
// the server keeps answering with every chain intact.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { Client, Metadata, credentials, status as GrpcStatus } from "@grpc/grpc-js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textMessage } from "../../src/controller/events.js";
import { HarnessRegistry } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Host } from "../../src/host/host.js";
import { startServer, type RunningServer } from "../../src/server/server.js";
import { methodPath } from "../../src/wire/index.js";
import { arbitraryInit } from "./arbitrary-message.js";

const QUIET = { debug() {}, info() {}, warn() {}, error() {} };

/** Codes the wire contract documents for client mistakes and refusals (never INTERNAL or UNKNOWN). */
const DOCUMENTED = new Set<number>([
  GrpcStatus.OK,
  GrpcStatus.INVALID_ARGUMENT,
  GrpcStatus.NOT_FOUND,
  GrpcStatus.ALREADY_EXISTS,
  GrpcStatus.FAILED_PRECONDITION,
  GrpcStatus.ABORTED,
  GrpcStatus.UNIMPLEMENTED,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.RESOURCE_EXHAUSTED,
]);

let dir = "";
let host: Host;
let server: RunningServer;
let sessionsChannel: Client;
let registryChannel: Client;
const known: string[] = ["echo", "counter", "default"];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-fuzz-"));
  // counter on the local runtime: CanPlace refuses it, so no fuzzed request starts a node process.
  host = await Host.open({
    dataDir: dir,
    nodeIdleMs: 0,
    harnesses: [{ name: "counter", runtime: "local", target: "counter" }],
  });
  server = await startServer(host, { addr: "127.0.0.1:0", registryAddr: "127.0.0.1:0", logger: QUIET });
  sessionsChannel = new Client(server.addr, credentials.createInsecure());
  registryChannel = new Client(server.registryAddr, credentials.createInsecure());
  for (let i = 0; i < 2; i++) {
    const s = await host.createSession({ harness: "echo" });
    await host.placer.exec({
      session: s.uid,
      inputs: [textMessage("user", `seed ${i}`)],
      signal: new AbortController().signal,
    });
    known.push(s.uid);
  }
  await host.placer.suspend(known.at(-1)!, new AbortController().signal);
});

afterAll(async () => {
  sessionsChannel?.close();
  registryChannel?.close();
  await server?.close(1000);
  await host?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every session's head and every registration: what a refused request must leave untouched. */
async function fingerprint(): Promise<string> {
  const parts: string[] = [];
  for (const uid of await host.journal.allSessionUids()) {
    const head = await host.journal.head(uid);
    parts.push(`${uid}@${head.seq}:${head.hash}`);
  }
  for (const reg of await host.journal.listRegistrations()) parts.push(`${reg.name}:${reg.specDigest}:${reg.state}`);
  return parts.join("\n");
}

/** Sends raw request bytes to a method; resolves to the final status code. */
function callRaw(channel: Client, method: DescMethod, bytes: Buffer): Promise<number> {
  const identity = (b: Buffer): Buffer => b;
  const options = { deadline: Date.now() + 20_000 };
  return new Promise((resolve) => {
    if (method.methodKind === "unary") {
      channel.makeUnaryRequest(methodPath(method), identity, identity, bytes, new Metadata(), options, (err) =>
        resolve(err ? err.code : GrpcStatus.OK),
      );
      return;
    }
    const call = channel.makeServerStreamRequest(
      methodPath(method),
      identity,
      identity,
      bytes,
      new Metadata(),
      options,
    );
    call.on("data", () => undefined);
    call.on("error", () => undefined);
    call.on("status", (st) => resolve(st.code));
  });
}

function methodsOf(service: DescService, channel: () => Client): { method: DescMethod; channel: () => Client }[] {
  return service.methods.map((method) => ({ method, channel }));
}

const ALL = [...methodsOf(Sessions, () => sessionsChannel), ...methodsOf(HarnessRegistry, () => registryChannel)];

/** Checks one answer: documented code; a refusal changed nothing. */
async function checkAnswer(what: string, send: () => Promise<number>): Promise<void> {
  const before = await fingerprint();
  const t0 = Date.now();
  const code = await send();
  if (process.env["HH_FUZZ_DEBUG"]) console.log(what, GrpcStatus[code], Date.now() - t0);
  expect(DOCUMENTED.has(code), `${what} answered ${GrpcStatus[code] ?? code}`).toBe(true);
  if (code !== GrpcStatus.OK)
    expect(await fingerprint(), `${what} was refused (${GrpcStatus[code]}) but changed the journal`).toBe(before);
}

describe("fuzzed typed requests", () => {
  for (const { method, channel } of ALL) {
    it(`${method.parent.name}.${method.name}: random field values get documented codes; refusals change nothing`, async () => {
      await fc.assert(
        fc.asyncProperty(arbitraryInit(method.input, { known }), async (init) => {
          const bytes = Buffer.from(toBinary(method.input, create(method.input, init)));
          await checkAnswer(`${method.name}(${bytes.length} bytes)`, () => callRaw(channel(), method, bytes));
        }),
        { numRuns: 20, seed: 4242 },
      );
    });
  }
});

/** Bytes that are not a valid encoding of any message with a string field 1. */
const MALFORMED: readonly [string, Buffer][] = [
  ["field 1 with wire type 7 (invalid)", Buffer.from([0x0f, 0x01])],
  ["length-delimited field 1 longer than the message", Buffer.from([0x0a, 0x10, 0x41])],
  ["truncated varint", Buffer.from([0x08, 0xff, 0xff])],
  ["field number 0", Buffer.from([0x00, 0x01])],
  ["end-group without start", Buffer.from([0x0c])],
  ["invalid UTF-8 in field 1", Buffer.from([0x0a, 0x04, 0xff, 0xfe, 0xc3, 0x28])],
  ["field 1 as a varint", Buffer.from([0x08, 0x96, 0x01])],
];

describe("raw and malformed bytes", () => {
  it("crafted malformed encodings on every method get documented codes and change nothing", async () => {
    for (const { method, channel } of ALL) {
      for (const [what, bytes] of MALFORMED) {
        await checkAnswer(`${method.name} with ${what}`, () => callRaw(channel(), method, bytes));
      }
    }
  });

  it("random bytes on every method get documented codes and change nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ALL),
        fc.uint8Array({ minLength: 1, maxLength: 96 }),
        async ({ method, channel }, bytes) => {
          await checkAnswer(`${method.name}(random)`, () => callRaw(channel(), method, Buffer.from(bytes)));
        },
      ),
      { numRuns: 120, seed: 777 },
    );
  });

  it("an oversize message (5 MiB) is RESOURCE_EXHAUSTED and changes nothing", async () => {
    const exec = Sessions.methods.find((m) => m.name === "Exec")!;
    const huge = Buffer.from(
      toBinary(
        exec.input,
        create(exec.input, { session: known[3]!, inputs: [textMessage("user", "y".repeat(5 * 1024 * 1024))] }),
      ),
    );
    const before = await fingerprint();
    expect(await callRaw(sessionsChannel, exec, huge)).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(await fingerprint()).toBe(before);
  });

  it("afterwards the server still answers and every chain verifies", async () => {
    const list = Sessions.methods.find((m) => m.name === "ListSessions")!;
    expect(await callRaw(sessionsChannel, list, Buffer.alloc(0))).toBe(GrpcStatus.OK);
    for (const uid of await host.journal.allSessionUids())
      expect(await host.journal.verify(uid)).toMatchObject({ ok: true });
  });
});
