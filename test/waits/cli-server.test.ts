// Approvals over the wire: Sessions.Approve's error table and exact retries, Exec/Resume of a parked
// turn ending OK with pending_approval, and the `approve` / `answer` / `resume` commands both in
// process and against `--server`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/run.js";
import { ExecState } from "../../src/gen/agentsessions/v1/session_pb.js";
import { codeOf, drain, startFixture, userInput, type Fixture } from "../server/helpers.js";
import { writesOf } from "./helpers.js";

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("Sessions.Approve", () => {
  it("Exec of a parked turn ends OK with a final Session frame; Approve follows the reference error table", async () => {
    const f = (fx = await startFixture());
    const { items, error } = await drain(f.sessions.exec({ harness: "ask", inputs: [userInput("x")] }));
    expect(error).toBeUndefined();
    const last = items.at(-1)!;
    expect(last.update.case).toBe("session");
    const parked = last.update.case === "session" ? last.update.value : undefined;
    expect(parked?.execState).toBe(ExecState.EXEC_AWAITING);
    const ref = parked!.pendingApproval!;
    const session = parked!.metadata!.uid;
    const base = { session, executionId: ref.executionId, toolCallId: ref.toolCallId, requestSeq: ref.requestSeq };

    expect(await codeOf(f.sessions.approve({ ...base }))).toBe(GrpcStatus.INVALID_ARGUMENT); // approved absent
    expect(await codeOf(f.sessions.approve({ ...base, requestSeq: 0n, approved: true }))).toBe(
      GrpcStatus.INVALID_ARGUMENT,
    );
    expect(await codeOf(f.sessions.approve({ ...base, toolCallId: "", approved: true }))).toBe(
      GrpcStatus.INVALID_ARGUMENT,
    );
    expect(
      await codeOf(f.sessions.approve({ ...base, session: "sess-000000000000000000000000", approved: true })),
    ).toBe(GrpcStatus.NOT_FOUND);
    expect(await codeOf(f.sessions.approve({ ...base, requestSeq: ref.requestSeq + 1n, approved: true }))).toBe(
      GrpcStatus.FAILED_PRECONDITION,
    );

    const identity = { principal: "ops@example", kind: "user" };
    const first = await f.sessions.approve({ ...base, approved: true, reason: "ok", identity });
    expect(first.decision?.event?.actor?.principal).toBe("ops@example");
    expect(first.session?.pendingApproval).toBeUndefined();
    const retry = await f.sessions.approve({ ...base, approved: true, reason: "ok", identity });
    expect(retry.decision?.contentHash).toBe(first.decision?.contentHash);
    expect(await codeOf(f.sessions.approve({ ...base, approved: false, reason: "ok", identity }))).toBe(
      GrpcStatus.FAILED_PRECONDITION,
    );
    expect((await drain(f.sessions.exec({ session, inputs: [userInput("more")] }))).error?.grpcCode).toBe(
      GrpcStatus.FAILED_PRECONDITION,
    );

    const resumed = await f.sessions.resume({ session });
    expect(resumed.execState).toBe(ExecState.EXEC_COMPLETED);
    expect(writesOf(f.host, session)).toBe(1);
  });
});

describe("approve / answer / resume commands", () => {
  it("in process: askcounter parks, approve, resume continues the counter; deny completes without the tool", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-waits-cli-"));
    dirs.push(dir);
    const exec = await cli("exec", "--data", dir, "--harness", "askcounter", "--input", "a", "--json");
    expect(exec.code, exec.err).toBe(8); // parked (docs/cli.md)
    const doc = JSON.parse(exec.out) as {
      session: string;
      pending_approval?: { tool_call_id: string; request_seq: number };
    };
    expect(doc.pending_approval).toMatchObject({ tool_call_id: "w1", request_seq: 4 });
    const s = doc.session;
    const get = JSON.parse((await cli("get", "--data", dir, "--session", s, "--json")).out) as {
      exec_state: string;
      pending_approval?: unknown;
    };
    expect(get.exec_state).toBe("EXEC_AWAITING");
    const approve = await cli("approve", "--data", dir, "--session", s, "--reason", "fine");
    expect(approve.code, approve.err).toBe(0);
    expect(approve.out).toMatch(/^approved [0-9a-f]{16}\/w1 request_seq=4 decision_seq=6/);
    const resume = await cli("resume", "--data", dir, "--session", s);
    expect(resume.out.split("\n")[0]).toBe("1 approved");
    const second = await cli("exec", "--data", dir, "--session", s, "--input", "b");
    expect(second.out).toMatch(/^awaiting approval: execution=[0-9a-f]{16} tool_call=w1 request_seq=\d+$/);
    expect((await cli("approve", "--data", dir, "--session", s, "--deny")).code).toBe(0);
    expect((await cli("resume", "--data", dir, "--session", s)).out.split("\n")[0]).toBe("2 denied");
    const noPending = await cli("approve", "--data", dir, "--session", s);
    expect(noPending.code).not.toBe(0);
    expect(noPending.err).toMatch(/no pending approval/);
    expect((await cli("verify", "--data", dir, "--session", s)).code).toBe(0);
  });

  it("against --server: ask parks, approve, resume; answer is refused for a non-question", async () => {
    const f = (fx = await startFixture());
    const server = ["--server", f.server.addr];
    const exec = await cli("exec", ...server, "--harness", "ask", "--input", "a", "--json");
    const s = (JSON.parse(exec.out) as { session: string }).session;
    expect((await cli("answer", ...server, "--session", s, "--text", "x")).err).toMatch(/not a question/);
    expect((await cli("approve", ...server, "--session", s)).code).toBe(0);
    const resume = await cli("resume", ...server, "--session", s);
    expect(resume.out.split("\n")[0]).toBe("receipt: approved");
    expect(writesOf(f.host, s)).toBe(1);
    expect((await cli("verify", ...server, "--session", s)).code).toBe(0);
  });
});
