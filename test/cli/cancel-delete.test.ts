// `harnesshost cancel` and `harnesshost delete` through the real command (docs/cli.md "Cancel and
// delete"): a turn running on a served host is cancelled from another command (exec exits 5, the
// status says CANCELED, next=resume); a parked wait is withdrawn and resume re-drives the turn with
// its call denied; cancel with nothing to cancel is a no-op; delete needs --yes, refuses a session
// with a running turn (exit 5), and leaves a deleted session NOT_FOUND (exit 3) and its fork child intact.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../docs/sh-script.js";
import { dropSchemas, freshSchema, PG_URL } from "../journal/postgres-fixture.js";
import { ServeProcess } from "../reliability/serve-process.js";
import { BIN, hh, REPO } from "./bin.js";

const dir = mkdtempSync(join(tmpdir(), "hh-cancel-"));
const fixture = join(REPO, "test/fixtures/harnesses/cli-truth.ts");
let serve: ServeProcess | undefined;
let server = "";

/** Resolves with the text of `stream` once `pattern` matches it (rejects if the process exits first). */
function waitFor(proc: ChildProcess, stream: "stdout" | "stderr", pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer): void => {
      text += chunk.toString();
      if (pattern.test(text)) {
        proc[stream]?.off("data", onData);
        resolve(text);
      }
    };
    proc[stream]?.on("data", onData);
    proc.once("exit", (code) => reject(new Error(`exited ${code} before ${pattern}: ${text}`)));
  });
}

function exited(proc: ChildProcess): Promise<{ code: number | null; stderr: string }> {
  let stderr = "";
  proc.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => proc.once("exit", (code) => resolve({ code, stderr })));
}

/** `exec --input hang` on the served host: resolves once the turn runs, with the session and its exit. */
async function hangingTurn(): Promise<{ session: string; done: Promise<{ code: number | null; stderr: string }> }> {
  const exec = spawn(process.execPath, [BIN, "exec", "--server", server, "--harness", "cut", "--input", "hang"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [stderr] = await Promise.all([
    waitFor(exec, "stderr", /^session sess-/m),
    waitFor(exec, "stdout", /started\n/),
  ]);
  const session = /^session (sess-[0-9a-f]{24})$/m.exec(stderr)?.[1] ?? "";
  return { session, done: exited(exec) };
}

beforeAll(async () => {
  server = `127.0.0.1:${await freePort()}`;
  const registry = `127.0.0.1:${await freePort()}`;
  serve = await ServeProcess.start({
    args: [
      "--data",
      join(dir, "data"),
      "--addr",
      server,
      "--registry-addr",
      registry,
      "--http-addr",
      "127.0.0.1:0",
      "--harness",
      `cut=local:${fixture}`,
      "--log-level",
      "warn",
    ],
  });
}, 300_000);

afterAll(async () => {
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("harnesshost cancel (real bin)", () => {
  it("cancelStopsARunningTurnFromAnotherCommand: exec exits 5, the session shows CANCELED next=resume", async () => {
    const { session, done } = await hangingTurn();
    const res = await hh(dir, "cancel", "--server", server, "--session", session, "--reason", "enough");
    expect(res.code).toBe(0);
    const lines = res.stdout.split("\n");
    expect(lines[0]).toMatch(/ exec=CANCELED turn=interrupted next=resume$/);
    expect(lines[1]).toBe("  turn cut: turn cancelled by Cancel: enough");
    expect(lines[2]).toBe(`  next: harnesshost resume --session ${session} --server ${server}`);
    const exec = await done;
    expect(exec.code).toBe(5);
    expect(exec.stderr).toMatch(/^harnesshost: .*cancel/m);
    // Nothing left to cancel now: a no-op, exit 0, the same status.
    const again = await hh(dir, "cancel", "--server", server, "--session", session, "--json");
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ exec_state: "EXEC_CANCELED", turn: { next: "resume" } });
  }, 300_000);

  it("cancelWithdrawsAParkedWait in process: not parked any more, and resume re-drives the turn as denied", async () => {
    const journal = join(dir, "waits.db");
    const first = await hh(dir, "exec", "--journal", journal, "--harness", "ask", "--input", "hello", "--json");
    const s = (JSON.parse(first.stdout) as { session: string }).session;
    const res = await hh(dir, "cancel", "--journal", journal, "--session", s, "--reason", "changed my mind");
    expect(res.code).toBe(0);
    expect(res.stdout.split("\n")[0]).toMatch(/ exec=CANCELED turn=interrupted next=resume$/);
    expect(res.stdout).not.toContain("pending_approval");
    expect(res.stdout).toContain("turn cut: wait withdrawn by Cancel: changed my mind");
    const resumed = await hh(dir, "resume", "--journal", journal, "--session", s);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain("receipt: denied");
    expect((await hh(dir, "get", "--journal", journal, "--session", s)).stdout).toMatch(/ exec=COMPLETED\n$/);
    expect((await hh(dir, "verify", "--journal", journal)).code).toBe(0);
  }, 300_000);

  it("cancelOfAnIdleOrUnknownSession: exit 0 and nothing written, or exit 3", async () => {
    const journal = join(dir, "idle.db");
    const first = await hh(dir, "exec", "--journal", journal, "--input", "hi", "--json");
    const { session: s, last_seq: head } = JSON.parse(first.stdout) as { session: string; last_seq: number };
    const idle = await hh(dir, "cancel", "--journal", journal, "--session", s);
    expect(idle.code).toBe(0);
    expect(idle.stdout).toContain(` last_seq=${head} `);
    expect(idle.stdout).toMatch(/ exec=COMPLETED\n$/);
    const unknown = await hh(
      dir,
      "cancel",
      "--journal",
      journal,
      "--session",
      "sess-000000000000000000000000",
      "--json",
    );
    expect(unknown.code).toBe(3);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ error: { code: "NOT_FOUND" } });
    expect((await hh(dir, "cancel", "--journal", journal)).code).toBe(2);
  }, 300_000);
});

describe("harnesshost delete (real bin)", () => {
  it("deletedSessionIsNotFound and its fork child still verifies and runs; --yes is required", async () => {
    const journal = join(dir, "del.db");
    const first = await hh(dir, "exec", "--journal", journal, "--input", "one", "--json");
    const { session: s, last_seq: head } = JSON.parse(first.stdout) as { session: string; last_seq: number };
    const child = (await hh(dir, "fork", "--journal", journal, "--session", s)).stdout.trim();
    const refused = await hh(dir, "delete", "--journal", journal, "--session", s);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("add --yes");
    expect((await hh(dir, "get", "--journal", journal, "--session", s)).code).toBe(0);
    const del = await hh(dir, "delete", "--journal", journal, "--session", s, "--yes");
    expect(del).toMatchObject({ code: 0, stdout: `deleted session ${s} (${head} records)\n` });
    for (const cmd of ["get", "replay", "export", "resume"])
      expect((await hh(dir, cmd, "--journal", journal, "--session", s)).code, cmd).toBe(3);
    expect((await hh(dir, "delete", "--journal", journal, "--session", s, "--yes")).code).toBe(3);
    const verify = await hh(dir, "verify", "--journal", journal);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain("1/1 sessions intact");
    const next = await hh(dir, "exec", "--journal", journal, "--session", child, "--input", "two");
    expect(next).toMatchObject({ code: 0, stdout: "echo:two\n" });
    expect((await hh(dir, "get", "--journal", journal, "--session", child)).stdout).toContain(` parent=${s}@${head}`);
  }, 300_000);

  it("deleteOfASessionWithARunningTurnIsRefused (exit 5); cancel, then delete", async () => {
    const { session, done } = await hangingTurn();
    const busy = await hh(dir, "delete", "--server", server, "--session", session, "--yes", "--json");
    expect(busy.code).toBe(5);
    expect(JSON.parse(busy.stderr)).toMatchObject({ error: { code: "ABORTED" } });
    expect(JSON.parse(busy.stderr).error.message).toContain("cancel");
    expect((await hh(dir, "cancel", "--server", server, "--session", session)).code).toBe(0);
    expect((await done).code).toBe(5);
    const del = await hh(dir, "delete", "--server", server, "--session", session, "--yes", "--json");
    expect(del.code).toBe(0);
    expect(JSON.parse(del.stdout)).toMatchObject({ deleted: session });
    expect((await hh(dir, "get", "--server", server, "--session", session)).code).toBe(3);
  }, 300_000);
});

describe("cancel and delete on a PostgreSQL journal (real bin)", () => {
  it("withdrawAndDeleteOnPostgres: a parked wait is withdrawn, resumed as denied, and the session deleted", async () => {
    const schema = freshSchema();
    const journal = `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}schema=${schema}`;
    try {
      const first = await hh(dir, "exec", "--journal", journal, "--harness", "ask", "--input", "hello", "--json");
      expect(first.code).toBe(8); // parked
      const s = (JSON.parse(first.stdout) as { session: string }).session;
      const child = (await hh(dir, "fork", "--journal", journal, "--session", s)).stdout.trim();
      const cancelled = await hh(dir, "cancel", "--journal", journal, "--session", s, "--json");
      expect(cancelled.code).toBe(0);
      expect(JSON.parse(cancelled.stdout)).toMatchObject({ exec_state: "EXEC_CANCELED", turn: { next: "resume" } });
      expect((await hh(dir, "resume", "--journal", journal, "--session", s)).stdout).toContain("receipt: denied");
      // The child inherited the parent's wait: it is not the child's own, so Cancel there does nothing.
      const inherited = await hh(dir, "cancel", "--journal", journal, "--session", child, "--json");
      expect(inherited.code).toBe(0);
      expect(JSON.parse(inherited.stdout)).toMatchObject({ exec_state: "EXEC_AWAITING", turn: { inherited: true } });
      const deleted = await hh(dir, "delete", "--journal", journal, "--session", s, "--yes");
      expect(deleted.code, deleted.stderr).toBe(0);
      expect((await hh(dir, "get", "--journal", journal, "--session", s)).code).toBe(3);
      const verify = await hh(dir, "verify", "--journal", journal);
      expect(verify.code).toBe(0);
      expect(verify.stdout).toContain("1/1 sessions intact");
    } finally {
      await dropSchemas([schema]);
    }
  }, 300_000);
});
