// Bad input (docs/protocol.md §15): every Sessions and HarnessRegistry RPC fuzzed with fast-check — typed messages
// with hostile field values (huge and lone-surrogate strings, negative and overflowing int64s, unknown
// enums) and raw bytes that are not valid protobuf (garbage, wrong wire types, truncations, oversize).
// Every answer carries a documented status code, a refused request leaves the journal as it was, and
// the server keeps answering with every chain intact.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromBinary, toBinary, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { Client, Metadata, credentials, status as GrpcStatus } from "@grpc/grpc-js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textMessage } from "../../src/controller/events.js";
import { HarnessRegistry } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { ExecRequestSchema, Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Host } from "../../src/host/host.js";
import { startServer, type RunningServer } from "../../src/server/server.js";
import { methodPath } from "../../src/wire/index.js";
import { arbitraryInit } from "./arbitrary-message.js";

const QUIET = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Codes the wire contract (docs/protocol.md, error table) documents for client mistakes and refusals
 * on any method (never INTERNAL or UNKNOWN). UNIMPLEMENTED and DEADLINE_EXCEEDED are not among them:
 * each is right only where `accepted` below says so.
 */
const DOCUMENTED = new Set<number>([
  GrpcStatus.OK,
  GrpcStatus.INVALID_ARGUMENT,
  GrpcStatus.NOT_FOUND,
  GrpcStatus.ALREADY_EXISTS,
  GrpcStatus.FAILED_PRECONDITION,
  GrpcStatus.ABORTED,
  GrpcStatus.RESOURCE_EXHAUSTED,
]);

/**
 * A call with no answer after this long hangs, which fails the test. The client sets no gRPC deadline,
 * so DEADLINE_EXCEEDED can only be the server's own answer.
 */
const HANG_MS = 15_000;
const HUNG = "no answer";
type Answer = number | typeof HUNG;
/** Set by the first call that hung: every later check fails at once with it (and shrinking stays fast). */
let hung: string | undefined;

/**
 * Whether `code` is a right answer from `method` to `bytes`, answered at `answeredAtMs`: never
 * UNIMPLEMENTED (every Sessions and HarnessRegistry method is served); DEADLINE_EXCEEDED only from
 * Exec when the request's deadline_unix had passed by the time of the answer.
 */
function accepted(method: DescMethod, bytes: Buffer, code: number, answeredAtMs: number): boolean {
  if (code === GrpcStatus.DEADLINE_EXCEEDED) {
    if (method !== EXEC) return false;
    let deadlineUnix: bigint;
    try {
      deadlineUnix = fromBinary(ExecRequestSchema, bytes).deadlineUnix;
    } catch {
      return false;
    }
    return deadlineUnix !== 0n && deadlineUnix * 1000n <= BigInt(answeredAtMs);
  }
  return DOCUMENTED.has(code);
}

let dir = "";
let host: Host;
let server: RunningServer;
let sessionsChannel: Client;
let registryChannel: Client;
const known: string[] = ["echo", "counter", "default"];
/** Sessions only DeleteSession is fuzzed with (so the other methods keep theirs to work on). */
const doomed: string[] = ["default"];

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
  for (let i = 0; i < 2; i++) doomed.push((await host.createSession({ harness: "echo" })).uid);
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

/** Sends raw request bytes to a method; resolves to the final status code, or HUNG after HANG_MS. */
function callRaw(channel: Client, method: DescMethod, bytes: Buffer): Promise<Answer> {
  const identity = (b: Buffer): Buffer => b;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (answer: Answer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    let cancel = (): void => undefined;
    const timer = setTimeout(() => {
      settle(HUNG);
      cancel();
    }, HANG_MS);
    if (method.methodKind === "unary") {
      const call = channel.makeUnaryRequest(methodPath(method), identity, identity, bytes, new Metadata(), {}, (err) =>
        settle(err ? err.code : GrpcStatus.OK),
      );
      cancel = () => call.cancel();
      return;
    }
    const call = channel.makeServerStreamRequest(methodPath(method), identity, identity, bytes, new Metadata(), {});
    cancel = () => call.cancel();
    call.on("data", () => undefined);
    call.on("error", () => undefined);
    call.on("status", (st) => settle(st.code));
  });
}

function methodsOf(service: DescService, channel: () => Client): { method: DescMethod; channel: () => Client }[] {
  return service.methods.map((method) => ({ method, channel }));
}

const EXEC = Sessions.methods.find((m) => m.name === "Exec")!;
const ALL = [...methodsOf(Sessions, () => sessionsChannel), ...methodsOf(HarnessRegistry, () => registryChannel)];

/** Checks one answer: it came, its code is right for the method and request; a refusal changed nothing. */
async function checkAnswer(
  what: string,
  method: DescMethod,
  send: () => Promise<Answer>,
  bytes: Buffer,
): Promise<void> {
  if (hung !== undefined) throw new Error(hung);
  const before = await fingerprint();
  const t0 = Date.now();
  const code = await send();
  const answeredAt = Date.now();
  if (process.env["HH_FUZZ_DEBUG"]) console.log(what, code === HUNG ? HUNG : GrpcStatus[code], answeredAt - t0);
  if (code === HUNG) {
    hung = `${what} gave no answer within ${HANG_MS / 1000} s`;
    throw new Error(hung);
  }
  expect(accepted(method, bytes, code, answeredAt), `${what} answered ${GrpcStatus[code] ?? code}`).toBe(true);
  if (code !== GrpcStatus.OK)
    expect(await fingerprint(), `${what} was refused (${GrpcStatus[code]}) but changed the journal`).toBe(before);
}

describe("fuzzed typed requests", () => {
  for (const { method, channel } of ALL) {
    it(`${method.parent.name}.${method.name}: random field values get documented codes; refusals change nothing`, async () => {
      await fc.assert(
        fc.asyncProperty(
          arbitraryInit(method.input, { known: method.name === "DeleteSession" ? doomed : known }),
          async (init) => {
            const bytes = Buffer.from(toBinary(method.input, create(method.input, init)));
            await checkAnswer(
              `${method.name}(${bytes.length} bytes)`,
              method,
              () => callRaw(channel(), method, bytes),
              bytes,
            );
          },
        ),
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
        await checkAnswer(`${method.name} with ${what}`, method, () => callRaw(channel(), method, bytes), bytes);
      }
    }
  });

  it("random bytes on every method get documented codes and change nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ALL),
        fc.uint8Array({ minLength: 1, maxLength: 96 }),
        async ({ method, channel }, bytes) => {
          const raw = Buffer.from(bytes);
          await checkAnswer(`${method.name}(random)`, method, () => callRaw(channel(), method, raw), raw);
        },
      ),
      { numRuns: 120, seed: 777 },
    );
  });

  it("an oversize message (5 MiB) is RESOURCE_EXHAUSTED and changes nothing", async () => {
    const exec = EXEC;
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

  it("Cancel and DeleteSession are served: a well-formed request for an unknown session is NOT_FOUND", async () => {
    for (const name of ["Cancel", "DeleteSession"]) {
      const method = Sessions.methods.find((m) => m.name === name)!;
      const init = name === "Cancel" ? { session: "sess-unknown" } : { uid: "sess-unknown" };
      const bytes = Buffer.from(toBinary(method.input, create(method.input, init)));
      const before = await fingerprint();
      expect(await callRaw(sessionsChannel, method, bytes), name).toBe(GrpcStatus.NOT_FOUND);
      expect(await fingerprint()).toBe(before);
    }
  });

  it("afterwards the server still answers and every chain verifies", async () => {
    const list = Sessions.methods.find((m) => m.name === "ListSessions")!;
    expect(await callRaw(sessionsChannel, list, Buffer.alloc(0))).toBe(GrpcStatus.OK);
    for (const uid of await host.journal.allSessionUids())
      expect(await host.journal.verify(uid)).toMatchObject({ ok: true });
  });
});
