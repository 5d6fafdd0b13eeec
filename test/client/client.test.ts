// `harnesshost/client` against a real server on loopback: every method does what its doc says, and
// every failure is a HarnessHostError with the host's ErrorCode as its code and the gRPC status name as
// its status.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connect,
  ExecState,
  HarnessHostError,
  isHarnessHostError,
  type ExecEvent,
  type ExecResult,
  type HarnessHostClient,
} from "../../src/client/index.js";
import { Host } from "../../src/host/host.js";
import { parseHarnessFlag } from "../../src/host/config.js";
import { startServer, type RunningServer } from "../../src/server/server.js";

const ASKER = resolve(import.meta.dirname, "../waits/fixtures/asker.ts");
const TOKEN = "client-test-token-0123456789abcdef";

let dir: string;
let host: Host;
let server: RunningServer;
let client: HarnessHostClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-client-"));
  host = await Host.open({ dataDir: dir, nodeIdleMs: 0, harnesses: [parseHarnessFlag(`asker=local:${ASKER}`)] });
  server = await startServer(host, {
    addr: "127.0.0.1:0",
    registryAddr: "127.0.0.1:0",
    logger: pino({ level: "silent" }),
    tokens: [TOKEN],
  });
  client = connect({ address: server.addr, registryAddress: server.registryAddr, token: TOKEN });
});

afterAll(async () => {
  client?.close();
  await server?.close(1000);
  await host?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function failure(p: Promise<unknown> | (() => Promise<unknown>)): Promise<HarnessHostError> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (err) {
    if (err instanceof HarnessHostError) return err;
    throw new Error(`expected a HarnessHostError, got ${String(err)}`);
  }
  throw new Error("expected the call to fail");
}

describe("harnesshost/client", () => {
  it("exec streams typed updates and result() gives the outcome of the same call", async () => {
    const call = client.sessions.exec({ harness: "echo", input: "hi" });
    const events: ExecEvent[] = [];
    for await (const e of call) events.push(e);
    expect(events[0]?.kind).toBe("session");
    expect(events.filter((e) => e.kind === "record" && e.output !== undefined)).toMatchObject([{ output: "echo:hi" }]);
    const res = await call.result();
    expect(res.outputs).toEqual(["echo:hi"]);
    expect(res.lastSeq).toBe(res.session.lastSeq);
    expect(res.records.length).toBe(events.filter((e) => e.kind === "record").length);
    expect(res.session.execState).toBe(ExecState.EXEC_COMPLETED);
  });

  it("exec awaited alone continues a session; get, list, replay, export and fork read it", async () => {
    const first = await client.sessions.exec({ harness: "echo", input: "one" }).result();
    const uid = first.session.metadata?.uid ?? "";
    const second = await client.sessions.exec({ session: uid, input: ["two", "three"] }).result();
    expect(second.outputs.length).toBeGreaterThan(0);
    expect((await client.sessions.get(uid)).lastSeq).toBe(second.session.lastSeq);
    const listed: string[] = [];
    for await (const s of client.sessions.list({ pageSize: 1 })) listed.push(s.metadata?.uid ?? "");
    expect(listed).toContain(uid);
    expect(await client.sessions.outputs(uid)).toEqual(["echo:one", ...second.outputs]);
    const lines: string[] = [];
    for await (const line of client.sessions.export(uid)) lines.push(line);
    expect(lines.length).toBe(Number(second.session.lastSeq));
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({ seq: "1" });
    const children = await client.sessions.fork({ session: uid, count: 2 });
    expect(children.map((c) => c.parentUid)).toEqual([uid, uid]);
  });

  it("suspend and resume report the snapshot and the session", async () => {
    const { session } = await client.sessions.exec({ harness: "echo", input: "s" }).result();
    const uid = session.metadata?.uid ?? "";
    const suspended = await client.sessions.suspend(uid);
    expect(suspended.session.metadata?.uid).toBe(uid);
    const resumed = await client.sessions.resume(uid);
    expect(resumed.outputs).toEqual([]);
    expect((await client.sessions.exec({ session: uid, input: "after" }).result()).outputs).toEqual(["echo:after"]);
  });

  it("approve and deny decide the pending approval; resume re-drives the turn", async () => {
    const parked = await client.sessions.exec({ harness: "ask", input: "hello" }).result();
    const uid = parked.session.metadata?.uid ?? "";
    expect(parked.session.pendingApproval?.requestSeq).toBeGreaterThan(0n);
    const decided = await client.sessions.approve({ session: uid, reason: "fine" });
    expect(decided).toMatchObject({ approved: true, requestSeq: parked.session.pendingApproval?.requestSeq });
    expect((await client.sessions.resume(uid)).outputs).toEqual(["receipt: approved"]);

    const other = await client.sessions.exec({ harness: "ask", input: "again" }).result();
    const uid2 = other.session.metadata?.uid ?? "";
    const notQuestion = await failure(client.sessions.answer({ session: uid2, text: "yes" }));
    expect(notQuestion.code).toBe("failed_precondition");
    expect((await client.sessions.get(uid2)).lastSeq).toBe(other.session.lastSeq);
    expect((await client.sessions.deny({ session: uid2 })).approved).toBe(false);
    expect((await client.sessions.resume(uid2)).outputs.join()).toMatch(/denied/);
  });

  it("answer resolves a choice to the recorded question's text; a choice out of range sends nothing", async () => {
    const { res: parked, uid } = await execOn("asker", "q");
    expect(parked.session.turn).toMatchObject({
      status: "awaiting",
      wait: "question",
      next: "answer",
      question: { text: "which colour?", choices: ["red", "blue"], allowFreeText: false },
    });
    const bad = await failure(client.sessions.answer({ session: uid, choice: 3 }));
    expect(bad.code).toBe("invalid_argument");
    expect((await client.sessions.get(uid)).lastSeq).toBe(parked.session.lastSeq);
    await client.sessions.answer({ session: uid, choice: 2 });
    expect((await client.sessions.resume(uid)).outputs).toEqual(["answer: blue"]);
  });

  it("everySeqInTheClientsResultsIsABigintEqualToTheWiresOwn", async () => {
    const parked = await client.sessions.exec({ harness: "ask", input: "seqs" }).result();
    const uid = parked.session.metadata?.uid ?? "";
    const pending = parked.session.pendingApproval?.requestSeq;
    expect(typeof pending).toBe("bigint");
    expect(typeof parked.lastSeq).toBe("bigint");
    expect(parked.lastSeq).toBe(parked.session.lastSeq);
    expect(parked.session.turn?.gate?.requestSeq).toBe(pending);
    const decided = await client.sessions.approve({ session: uid });
    // The decided gate is the pending one, compared as it is sent: no conversion on either side.
    expect(decided.requestSeq).toBe(pending);
    expect(decided.session.turn?.gate?.requestSeq).toBe(pending);
    // A result's seq is accepted back as is (as is a plain number): an exact retry of the same gate.
    const again = await client.sessions.approve({
      session: uid,
      tuple: { executionId: decided.executionId, toolCallId: decided.toolCallId, requestSeq: decided.requestSeq },
    });
    expect(again.decision.seq).toBe(decided.decision.seq);
    const numbered = await client.sessions.approve({
      session: uid,
      tuple: { executionId: decided.executionId, toolCallId: decided.toolCallId, requestSeq: Number(pending) },
    });
    expect(numbered.decision.seq).toBe(decided.decision.seq);
    const records: bigint[] = [];
    for await (const rec of client.sessions.replay(uid, { fromSeq: parked.lastSeq, toSeq: parked.lastSeq }))
      records.push(rec.seq);
    expect(records).toEqual([parked.lastSeq]);
  });

  it("theTurnStatusIsATypedFieldOfEverySessionTheClientReturns", async () => {
    const done = await client.sessions.exec({ harness: "echo", input: "t" }).result();
    expect(done.session.turn).toEqual({ status: "completed" });
    const uid = done.session.metadata?.uid ?? "";
    expect((await client.sessions.get(uid)).turn?.status).toBe("completed");
    const listed = (await client.sessions.listPage({ pageSize: 500 })).sessions.find((s) => s.metadata?.uid === uid);
    expect(listed?.turn?.status).toBe("completed");
    const filtered = (await client.sessions.listPage({ harness: "echo", pageSize: 500 })).sessions;
    expect(filtered.every((s) => s.turn !== undefined)).toBe(true);
    const created = await client.sessions.create({ harness: "echo" });
    expect((await client.sessions.get(created.metadata?.uid ?? "")).turn).toEqual({ status: "new", next: "exec" });

    const { res: parked, uid: pid } = await execOn("ask", "typed");
    expect(parked.session.turn).toMatchObject({
      status: "awaiting",
      wait: "approval",
      next: "approve",
      gate: {
        executionId: parked.session.pendingApproval?.executionId,
        toolCallId: parked.session.pendingApproval?.toolCallId,
      },
    });
    const decided = await client.sessions.deny({ session: pid, reason: "no" });
    expect(decided.session.turn).toMatchObject({ status: "decided", approved: false, next: "resume" });
    const [child] = await client.sessions.fork({ session: pid });
    expect((await client.sessions.get(child?.metadata?.uid ?? "")).turn).toMatchObject({
      status: "decided",
      inherited: true,
    });
    expect((await client.sessions.resume(pid)).session.turn?.status).toBe("completed");
  });

  it("errorsCarryTheHostsErrorCodeTheGrpcStatusAndTheServersMessage", async () => {
    const missing = await failure(client.sessions.get("sess-000000000000000000000000"));
    expect(missing.code).toBe("not_found");
    expect(missing.status).toBe("NOT_FOUND");
    expect(missing.message).toMatch(/sess-000000000000000000000000/);
    expect(isHarnessHostError(missing, "not_found")).toBe(true);
    expect(missing.requestId).toMatch(/^[A-Za-z0-9._-]+$/);
    const none = await failure(client.sessions.approve({ session: (await newEcho()).uid }));
    expect(none.code).toBe("failed_precondition");
    const stream = await failure(
      client.sessions.exec({ session: "sess-000000000000000000000000", input: "x" }).result(),
    );
    expect(stream.code).toBe("not_found");
    const anonymous = connect({ address: server.addr });
    try {
      expect((await failure(anonymous.sessions.get("sess-000000000000000000000000"))).code).toBe("unauthenticated");
    } finally {
      anonymous.close();
    }
  });

  it("aCallThatCannotBeOpenedSettlesItsResultWithTheError: result() and iteration both fail, neither hangs", async () => {
    // A token grpc-js refuses as a header value: the call throws as it is opened, before any byte is sent.
    const refused = connect({ address: server.addr, token: "bad\ntoken" });
    try {
      const viaResult = await failure(refused.sessions.exec({ harness: "echo", input: "x" }).result());
      expect(viaResult.message).toMatch(/illegal characters/);
      const call = refused.sessions.exec({ harness: "echo", input: "x" });
      const viaIteration = await failure(
        (async () => {
          for await (const _ of call);
        })(),
      );
      expect(viaIteration.message).toBe(viaResult.message);
      expect((await failure(call.result())).message).toBe(viaResult.message);
    } finally {
      refused.close();
    }
  });

  it("an aborted signal is CANCELLED, an expired deadline DEADLINE_EXCEEDED, leaving the loop early CANCELLED", async () => {
    const aborted = await failure(
      client.sessions.get("sess-000000000000000000000000", { signal: AbortSignal.abort() }),
    );
    expect(aborted.code).toBe("cancelled");
    const late = await failure(
      client.sessions.exec({ harness: "echo", input: "late" }, { deadline: Date.now() - 1 }).result(),
    );
    expect(late.code).toBe("deadline_exceeded");
    const call = client.sessions.exec({ harness: "echo", input: "left" });
    for await (const _ of call) break;
    expect((await failure(call.result())).code).toBe("cancelled");
  });

  it("harnesses register, get, list and retire on the operator registry", async () => {
    const res = await client.harnesses.register({
      name: "client-remote",
      address: "unix:///tmp/hh-client-test-nonexistent.sock",
      resumability: "STATELESS_REPLAY",
    });
    expect(res.harness?.metadata?.name).toBe("client-remote");
    expect((await client.harnesses.get("client-remote")).metadata?.name).toBe("client-remote");
    const names: string[] = [];
    for await (const reg of client.harnesses.list()) names.push(reg.metadata?.name ?? "");
    expect(names).toEqual(expect.arrayContaining(["echo", "client-remote"]));
    await client.harnesses.retire("client-remote", { reason: "test" });
    const retired = await failure(client.sessions.exec({ harness: "client-remote", input: "x" }).result());
    expect(retired.code).toBe("failed_precondition");
    const noRegistry = connect({ address: server.addr, token: TOKEN });
    try {
      expect((await failure(() => noRegistry.harnesses.get("echo"))).code).toBe("failed_precondition");
    } finally {
      noRegistry.close();
    }
  });
});

async function newEcho(): Promise<{ uid: string }> {
  const { session } = await client.sessions.exec({ harness: "echo", input: "e" }).result();
  return { uid: session.metadata?.uid ?? "" };
}

async function execOn(harness: string, input: string): Promise<{ res: ExecResult; uid: string }> {
  const res = await client.sessions.exec({ harness, input }).result();
  return { res, uid: res.session.metadata?.uid ?? "" };
}
