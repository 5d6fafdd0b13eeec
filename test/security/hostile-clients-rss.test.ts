// Hostile clients against a real `harnesshost serve` child process, with its memory watched: each kind
// of hostile client the issue names (huge, deep, many-part, never-reading, fork amplification) gets its
// limit's status, health still answers, and the host's peak resident memory (VmHWM of the served
// process, reset before each case) stays within HOST_RSS_BUDGET (hostile-helpers.ts). Default limits;
// loopback only; every loop is bounded by count. The assertions are memory budgets, never times. The
// same clients over the HTTP listener: hostile-clients-http-rss.test.ts.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { create } from "@bufbuild/protobuf";
import type { JsonObject } from "@bufbuild/protobuf";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MessageSchema, PartSchema, type Message } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { DEFAULT_LIMITS } from "../../src/limits/index.js";
import { createClient } from "../../src/wire/index.js";
import { BIN, ServeProcess } from "../reliability/serve-process.js";
import { drain, userInput, type SessionsClient } from "../server/helpers.js";
import {
  HOST_RSS_BUDGET,
  REPEAT,
  STALLED_BUDGET,
  STALLED_CLIENTS,
  stalledExec,
  withinRssBudget,
} from "./hostile-helpers.js";

let dir = "";
let serve: ServeProcess | undefined;
let client: SessionsClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-hostile-rss-"));
  serve = await ServeProcess.start({
    args: ["--data", join(dir, "data"), "--addr", "127.0.0.1:0", "--registry-addr", "off", "--log-level", "warn"],
  });
  client = createClient(Sessions, serve.addr);
}, 120_000);

afterAll(async () => {
  client?.close();
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs one hostile case and asserts the served host's peak RSS during it stayed within `budget`. */
function withinBudget(name: string, hostile: () => Promise<void>, budget = HOST_RSS_BUDGET): Promise<void> {
  return withinRssBudget({ pid: serve?.pid ?? 0, addr: serve?.addr ?? "" }, name, hostile, budget);
}

async function execCode(req: Parameters<SessionsClient["exec"]>[0]): Promise<{ code: number; message: string }> {
  const { error } = await drain(client.exec(req));
  return { code: error?.grpcCode ?? status.OK, message: error?.message ?? "" };
}

function nested(levels: number): Message {
  let data: JsonObject = { leaf: true };
  for (let i = 0; i < levels; i++) data = { a: data };
  return create(MessageSchema, { role: "user", parts: [{ part: { case: "data", value: { data } } }] });
}

describe("hostile clients: the served host's memory", () => {
  it("hugeRequestsKeepTheHostWithinItsRssBudget", async () => {
    await withinBudget("huge", async () => {
      const overInput = userInput("x".repeat(DEFAULT_LIMITS.inputBytes + 1));
      const overRequest = userInput("x".repeat(DEFAULT_LIMITS.requestBytes + 1));
      for (let i = 0; i < REPEAT; i++) {
        const input = await execCode({ inputs: [overInput] });
        expect(input.code).toBe(status.RESOURCE_EXHAUSTED);
        expect(input.message).toContain("inputBytes");
        expect((await execCode({ inputs: [overRequest] })).code).toBe(status.RESOURCE_EXHAUSTED);
      }
      // Accepted inputs just under the limit, a new session each.
      const under = userInput("u".repeat(DEFAULT_LIMITS.inputBytes - 64));
      for (let i = 0; i < REPEAT; i++) expect((await execCode({ inputs: [under] })).code).toBe(status.OK);
    });
  }, 300_000);

  it("deepRequestsKeepTheHostWithinItsRssBudget", async () => {
    await withinBudget("deep", async () => {
      const deep = nested(DEFAULT_LIMITS.nestingDepth + 8);
      for (let i = 0; i < REPEAT; i++) {
        const res = await execCode({ inputs: [deep] });
        expect(res.code).toBe(status.INVALID_ARGUMENT);
        expect(res.message).toContain("nestingDepth");
      }
    });
  }, 300_000);

  it("manyPartRequestsKeepTheHostWithinItsRssBudget", async () => {
    await withinBudget("many-part", async () => {
      const input = create(MessageSchema, {
        role: "user",
        parts: Array.from({ length: 1_000_000 }, () => create(PartSchema, {})),
      });
      for (let round = 0; round < REPEAT / 4; round++) {
        const four = await Promise.all(Array.from({ length: 4 }, () => execCode({ inputs: [input] })));
        for (const res of four) expect(res.code).toBe(status.RESOURCE_EXHAUSTED);
      }
    });
  }, 300_000);

  it("forkAmplificationKeepsTheHostWithinItsRssBudget", async () => {
    await withinBudget("fork amplification", async () => {
      const big = userInput("x".repeat(DEFAULT_LIMITS.inputBytes - 64));
      const first = await drain(client.exec({ inputs: [big] }));
      const head = first.items[0]?.update;
      const uid = head?.case === "session" ? (head.value.metadata?.uid ?? "") : "";
      for (let t = 0; t < 3; t++) expect((await execCode({ session: uid, inputs: [big] })).code).toBe(status.OK);
      for (let i = 0; i < 4; i++) {
        const err = await client.fork({ session: uid, count: 128 }).then(
          () => undefined,
          (e: unknown) => e as { grpcCode: number; message: string },
        );
        expect(err?.grpcCode).toBe(status.RESOURCE_EXHAUSTED);
        expect(err?.message).toContain("forkBytes");
      }
      const annotations = { note: "n".repeat(DEFAULT_LIMITS.metadataBytes - 100) };
      const s = await client.createSession({ session: { harness: "echo", annotations } });
      const wide = s.metadata?.uid ?? "";
      expect((await execCode({ session: wide, inputs: [userInput("hi")] })).code).toBe(status.OK);
      for (let i = 0; i < 4; i++) expect((await client.fork({ session: wide, count: 128 })).children).toHaveLength(128);
    });
  }, 300_000);

  // Last: the host keeps what V8 took for the stalled streams, which would count against the next case.
  it("neverReadingClientsKeepTheHostWithinItsRssBudget", async () => {
    const neverReading = async (): Promise<void> => {
      const text = "q".repeat(DEFAULT_LIMITS.inputBytes - 64);
      const stalled = [];
      for (let i = 0; i < STALLED_CLIENTS; i++) {
        const s = await client.createSession({ session: { harness: "echo" } });
        stalled.push(stalledExec(serve?.addr ?? "", s.metadata?.uid ?? "", text));
      }
      // Every stalled turn still commits and frees its session (polled, bounded by count).
      for (const c of stalled) {
        const end = await c.readToEnd();
        expect([status.OK, status.RESOURCE_EXHAUSTED]).toContain(end.code);
      }
    };
    await withinBudget("never-reading", neverReading, HOST_RSS_BUDGET + STALLED_BUDGET);
  }, 300_000);

  it("every journal still verifies after the hostile clients", async () => {
    await serve?.stop();
    const { stdout } = await promisify(execFile)(process.execPath, [BIN, "verify", "--data", join(dir, "data")], {
      timeout: 120_000,
    });
    expect(stdout.trim().split("\n").at(-1)).toMatch(/^(\d+)\/\1 sessions intact$/);
  }, 180_000);
});
