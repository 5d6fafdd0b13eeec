// Hostile clients (docs/operations.md, "Limits"): requests past a limit are refused at the edge with the limit's status
// and name, nothing is journaled, the host stays up (health answers) and every journal verifies.
// Loopback only; every loop is bounded by count.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { JsonObject } from "@bufbuild/protobuf";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MessageSchema, PartSchema, type Message } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ExecRequestSchema } from "../../src/gen/agentsessions/v1/session_pb.js";
import { DEFAULT_LIMITS } from "../../src/limits/index.js";
import { codeOf, drain, startFixture, userInput, type Fixture } from "../server/helpers.js";
import { allJournalsVerify, healthServing } from "./hostile-helpers.js";

let f: Fixture;
beforeAll(async () => {
  f = await startFixture();
});
afterAll(async () => {
  await f?.close();
});

/** A user message whose one data part nests `levels` JSON objects. */
function nested(levels: number): Message {
  let data: JsonObject = { leaf: true };
  for (let i = 0; i < levels; i++) data = { a: data };
  return create(MessageSchema, { role: "user", parts: [{ part: { case: "data", value: { data } } }] });
}

/** The largest `levels` for which `fits(levels)` holds (fits is monotone). */
function largest(fits: (levels: number) => boolean): number {
  let lo = 0;
  let hi = 200;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

const decodes = (levels: number, limit?: number): boolean => {
  try {
    const req = create(ExecRequestSchema, { inputs: [nested(levels)] });
    fromBinary(ExecRequestSchema, toBinary(ExecRequestSchema, req), limit ? { recursionLimit: limit } : {});
    return true;
  } catch {
    return false;
  }
};

async function sessionCount(): Promise<number> {
  return (await f.host.journal.allSessionUids()).length;
}

async function execStatus(req: Parameters<Fixture["sessions"]["exec"]>[0]): Promise<{ code: number; message: string }> {
  const { error } = await drain(f.sessions.exec(req));
  return { code: error?.grpcCode ?? status.OK, message: error?.message ?? "" };
}

describe("hostile clients", () => {
  it("inputNestedAtTheDecoderLimitIsRefusedBeforeItIsJournaled", async () => {
    const atDecoderLimit = largest((n) => decodes(n));
    const before = await sessionCount();
    const res = await execStatus({ inputs: [nested(atDecoderLimit)] });
    expect(res.code).toBe(status.INVALID_ARGUMENT);
    expect(res.message).toContain("nestingDepth");
    expect(await sessionCount()).toBe(before);
    await healthServing(f.server.addr);
  });

  it("whatIsJournaledIsAlwaysReadableReplayableAndVerifiable", async () => {
    // The deepest input the host accepts: its records still decode through Replay, wrapped in a
    // LogRecord, and the chain verifies.
    const deepest = largest((n) => {
      try {
        fromBinary(MessageSchema, toBinary(MessageSchema, nested(n)), { recursionLimit: DEFAULT_LIMITS.nestingDepth });
        return true;
      } catch {
        return false;
      }
    });
    const { items, error } = await drain(f.sessions.exec({ inputs: [nested(deepest)] }));
    expect(error).toBeUndefined();
    const first = items[0]?.update;
    const uid = first?.case === "session" ? (first.value.metadata?.uid ?? "") : "";
    const replayed = await drain(f.sessions.replay({ session: uid }));
    expect(replayed.error).toBeUndefined();
    expect(replayed.items.length).toBeGreaterThan(3);
    expect((await f.host.journal.verify(uid)).ok).toBe(true);
    // One level deeper is refused.
    expect((await execStatus({ inputs: [nested(deepest + 1)] })).code).toBe(status.INVALID_ARGUMENT);
  });

  it("tooManyPartsIsResourceExhaustedAndLeavesNoSession", async () => {
    const before = await sessionCount();
    const parts = Array.from({ length: DEFAULT_LIMITS.inputParts + 1 }, () =>
      create(PartSchema, { part: { case: "text", value: { text: "" } } }),
    );
    const res = await execStatus({ inputs: [create(MessageSchema, { role: "user", parts })] });
    expect(res.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(res.message).toContain("inputParts");
    expect(await sessionCount()).toBe(before);
  });

  it("aMillionEmptyPartsIsRefusedAndHealthStillAnswers", async () => {
    const parts = Array.from({ length: 1_000_000 }, () => create(PartSchema, {}));
    const res = await execStatus({ inputs: [create(MessageSchema, { role: "user", parts })] });
    expect(res.code).toBe(status.RESOURCE_EXHAUSTED);
    // Refused on its bytes, before a million Part objects are decoded.
    expect(res.message).toContain("requestMessages");
    await healthServing(f.server.addr);
  });

  it("healthKeepsAnsweringDuringFourConcurrentMillionPartRequests", async () => {
    const parts = Array.from({ length: 1_000_000 }, () => create(PartSchema, {}));
    const input = create(MessageSchema, { role: "user", parts });
    const hostile = Promise.all(Array.from({ length: 4 }, () => execStatus({ inputs: [input] })));
    let settled = false;
    void hostile.finally(() => {
      settled = true;
    });
    let probes = 0;
    // Each probe must be answered SERVING while the hostile requests are decoded and refused; its
    // deadline is generous (the client shares this process's event loop, and CI machines are loaded).
    while (!settled && probes < 50) {
      await healthServing(f.server.addr, 10_000);
      probes++;
    }
    for (const res of await hostile) expect(res.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(probes).toBeGreaterThan(0);
  });

  it("inputsOverInputBytesAreResourceExhausted", async () => {
    const before = await sessionCount();
    const res = await execStatus({ inputs: [userInput("x".repeat(DEFAULT_LIMITS.inputBytes + 1))] });
    expect(res.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(res.message).toContain("inputBytes");
    expect(await sessionCount()).toBe(before);
  });

  it("aRequestOverRequestBytesIsResourceExhausted", async () => {
    const res = await execStatus({ inputs: [userInput("x".repeat(DEFAULT_LIMITS.requestBytes + 1))] });
    expect(res.code).toBe(status.RESOURCE_EXHAUSTED);
  });

  it("sessionMetadataOverMetadataBytesIsRefused", async () => {
    const before = await sessionCount();
    const annotations = { note: "n".repeat(DEFAULT_LIMITS.metadataBytes) };
    const code = await codeOf(f.sessions.createSession({ session: { harness: "echo", annotations } }));
    expect(code).toBe(status.RESOURCE_EXHAUSTED);
    expect(await sessionCount()).toBe(before);
  });

  it("idsOverIdCharsAreInvalidArgument", async () => {
    const long = "s".repeat(DEFAULT_LIMITS.idChars + 1);
    expect(await codeOf(f.sessions.getSession({ uid: long }))).toBe(status.INVALID_ARGUMENT);
    expect((await execStatus({ session: long, inputs: [userInput("hi")] })).code).toBe(status.INVALID_ARGUMENT);
    expect(await codeOf(f.sessions.suspend({ session: long }))).toBe(status.INVALID_ARGUMENT);
  });

  it("forkAmplificationIsRefusedBeforeAnyChildExists", async () => {
    // Two turns of ~1 MiB input (and its ~1 MiB echo) make a ~4 MiB session; 128 children would
    // write ~512 MiB, past forkBytes.
    const big = "x".repeat(DEFAULT_LIMITS.inputBytes - 64);
    const first = await drain(f.sessions.exec({ inputs: [userInput(big)] }));
    const head = first.items[0]?.update;
    const uid = head?.case === "session" ? (head.value.metadata?.uid ?? "") : "";
    expect((await drain(f.sessions.exec({ session: uid, inputs: [userInput(big)] }))).error).toBeUndefined();
    const before = await sessionCount();
    const err = await f.sessions.fork({ session: uid, count: 128 }).then(
      () => undefined,
      (e: unknown) => e as { grpcCode: number; message: string },
    );
    expect(err?.grpcCode).toBe(status.RESOURCE_EXHAUSTED);
    expect(err?.message).toContain("forkBytes");
    expect(await sessionCount()).toBe(before);
    const two = await f.sessions.fork({ session: uid, count: 2 });
    expect(two.children).toHaveLength(2);
    await healthServing(f.server.addr);
  });

  it("aFullForkOfASessionAtTheMetadataLimitAnswersWithEveryChild", async () => {
    const annotations = { note: "n".repeat(DEFAULT_LIMITS.metadataBytes - 100) };
    const s = await f.sessions.createSession({ session: { harness: "echo", annotations } });
    const uid = s.metadata?.uid ?? "";
    expect((await drain(f.sessions.exec({ session: uid, inputs: [userInput("hi")] }))).error).toBeUndefined();
    const res = await f.sessions.fork({ session: uid, count: 128 });
    expect(res.children).toHaveLength(128);
    for (const child of res.children) expect(child.annotations["note"]).toBe(annotations.note);
  });

  it("aHugeSessionIdIsLoggedTruncated", async () => {
    const huge = `sess-${"h".repeat(3 * 1024 * 1024)}`;
    expect(await codeOf(f.sessions.getSession({ uid: huge }))).toBe(status.INVALID_ARGUMENT);
    const line = f.logs.find(
      (l) => l.includes('"method":"/agentsessions.v1.Sessions/GetSession"') && l.includes("hhhh"),
    );
    expect(line).toBeDefined();
    expect(line?.length ?? 0).toBeLessThan(2048);
    expect(line).toContain(`(${huge.length} chars)`);
  });

  it("every journal still verifies after the hostile requests", async () => {
    await allJournalsVerify(f.host.journal);
    await healthServing(f.server.addr);
  });
});
