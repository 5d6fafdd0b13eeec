// The CLI tells the truth about a session's status, through the real command: an interrupted turn,
// a pending and a decided wait and the command that continues each (get and list agree); a new
// session's id on stderr as soon as it exists; every OUTPUT of a streamed turn, in order.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../docs/sh-script.js";
import { ServeProcess } from "../reliability/serve-process.js";
import { BIN, hh, REPO } from "./bin.js";

const dir = mkdtempSync(join(tmpdir(), "hh-status-"));
const fixture = join(REPO, "test/fixtures/harnesses/cli-truth.ts");
let serve: ServeProcess | undefined;
let server = "";
let registry = "";

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

beforeAll(async () => {
  const [p1, p2] = [await freePort(), await freePort()];
  server = `127.0.0.1:${p1}`;
  registry = `127.0.0.1:${p2}`;
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

const sessionOf = (stderr: string): string => /^session (sess-[0-9a-f]{24})$/m.exec(stderr)?.[1] ?? "";

describe("session status and output (real bin)", () => {
  it("streamingExecPrintsEveryOutputInOrder: model text, then the harness's own output", async () => {
    const res = await hh(dir, "exec", "--server", server, "--harness", "cut", "--input", "mixed");
    expect(res.code).toBe(0);
    expect(res.stdout).toBe("echo:from the model\nafter the model\n");
    const json = await hh(dir, "exec", "--server", server, "--harness", "cut", "--input", "mixed", "--json");
    expect(JSON.parse(json.stdout)).toMatchObject({ output: "echo:from the model\nafter the model" });
  }, 300_000);

  it("interruptedTurnIsShownWithTheCommandThatContinuesIt: get and list say FAILED, not COMPLETED", async () => {
    const res = await hh(dir, "exec", "--server", server, "--harness", "cut", "--input", "fail");
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("half a turn\n");
    const s = sessionOf(res.stderr);
    expect(s).not.toBe("");
    const get = await hh(dir, "get", "--server", server, "--session", s);
    expect(get.code).toBe(0);
    const lines = get.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/ exec=FAILED turn=interrupted next=resume$/);
    expect(lines[1]).toBe("  turn cut: the harness gave up half-way");
    expect(lines[2]).toBe(`  next: harnesshost resume --session ${s} --server ${server}`);
    const json = JSON.parse((await hh(dir, "get", "--server", server, "--session", s, "--json")).stdout);
    expect(json).toMatchObject({
      exec_state: "EXEC_FAILED",
      turn: { status: "interrupted", next: "resume", error: "the harness gave up half-way" },
    });
    const list = await hh(dir, "list", "--server", server);
    expect(list.stdout.split("\n").find((l) => l.includes(s))).toMatch(/ exec=FAILED turn=interrupted next=resume$/);
  }, 300_000);

  it("newSessionIdIsPrintedAsSoonAsItExists: Ctrl-C on exec leaves a CANCELED turn with next=resume", async () => {
    const exec = spawn(process.execPath, [BIN, "exec", "--server", server, "--harness", "cut", "--input", "hang"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const [stderr] = await Promise.all([
      waitFor(exec, "stderr", /^session sess-/m),
      waitFor(exec, "stdout", /started\n/),
    ]);
    const s = sessionOf(stderr);
    const exited = new Promise((r) => exec.once("exit", r));
    exec.kill("SIGINT");
    await exited;
    // The host records the cancellation when it sees the call end: poll with a deadline.
    let line = "";
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
      line = (await hh(dir, "get", "--server", server, "--session", s)).stdout.split("\n")[0] ?? "";
      if (!line.includes("exec=RUNNING")) break;
    }
    expect(line).toMatch(/ exec=CANCELED turn=interrupted next=resume$/);
  }, 300_000);

  it("pendingAndDecidedWaitsAreShown: awaiting → decided (next=resume) → completed, in process", async () => {
    const journal = join(dir, "waits.db");
    const first = await hh(dir, "exec", "--journal", journal, "--harness", "ask", "--input", "hello", "--json");
    const s = (JSON.parse(first.stdout) as { session: string }).session;
    const parked = (await hh(dir, "get", "--journal", journal, "--session", s)).stdout.split("\n");
    expect(parked[0]).toMatch(/ exec=AWAITING wait=approval pending_approval=[0-9a-f]{16}\/w1@4 next=approve$/);
    expect(parked[1]).toBe(`  next: harnesshost approve --session ${s} --journal ${journal} [--deny] [--reason TEXT]`);
    const approved = await hh(dir, "approve", "--journal", journal, "--session", s, "--json");
    expect(approved.code).toBe(0);
    // repeatedApproveReturnsTheSameRecord (README walkthrough 4): an exact retry before resume is
    // answered with the same decision record; a changed decision is refused (exit 4) and changes nothing.
    const again = await hh(dir, "approve", "--journal", journal, "--session", s, "--json");
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(JSON.parse(approved.stdout));
    const changed = await hh(dir, "approve", "--journal", journal, "--session", s, "--deny", "--json");
    expect(changed.code).toBe(4);
    expect(JSON.parse(changed.stderr)).toMatchObject({ error: { code: "FAILED_PRECONDITION" } });
    const decided = (await hh(dir, "get", "--journal", journal, "--session", s)).stdout.split("\n");
    expect(decided[0]).toMatch(/ exec=AWAITING wait=approval decided=approved next=resume$/);
    expect(decided[1]).toBe(`  next: harnesshost resume --session ${s} --journal ${journal}`);
    const list = await hh(dir, "list", "--journal", journal, "--json");
    expect(JSON.parse(list.stdout).sessions[0]).toMatchObject({
      exec_state: "EXEC_AWAITING",
      turn: { status: "decided", wait: "approval", approved: true, next: "resume" },
    });
    expect((await hh(dir, "resume", "--journal", journal, "--session", s)).stdout).toContain("receipt: approved");
    const done = await hh(dir, "get", "--journal", journal, "--session", s);
    expect(done.stdout).toMatch(/ exec=COMPLETED\n$/);
  }, 300_000);
});

describe("errors a person can act on (real bin)", () => {
  it("wrongPortSaysWhichPortToUse: the registry port given as the Sessions API, and the reverse", async () => {
    const get = await hh(dir, "get", "--server", registry, "--session", "sess-000000000000000000000000");
    expect(get.code).toBe(6);
    expect(get.stderr).toBe(
      `harnesshost: ${registry} answers but is not a Sessions API (is it the registry port?): give --server the address of \`serve --addr\` (default 127.0.0.1:7233)\n`,
    );
    const list = await hh(dir, "harness", "list", "--server", server);
    expect(list.code).toBe(6);
    expect(list.stderr).toMatch(/is not a harness registry \(is it the Sessions port\?\)/);
  }, 300_000);

  it("a mistyped runtime and a mistyped built-in name get one line naming the fix", async () => {
    const serveBad = await hh(dir, "serve", "--harness", "x=cloud:echo", "--data", join(dir, "never"));
    expect(serveBad.code).toBe(2);
    expect(serveBad.stderr.split("\n")[0]).toBe(
      'harnesshost serve: --harness "x=cloud:echo": unknown runtime "cloud" (runtimes: local, spawned, remote, vm; or name=HOST:PORT for a running node)',
    );
    const typo = await hh(dir, "conformance", "--harness", "ecoh");
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^harnesshost: no built-in harness ecoh; did you mean echo\? \(built-ins: echo, /);
    expect(typo.stderr.split("\n")).toHaveLength(2);
  }, 300_000);

  it("closedPipeEndsQuietly: `export … | head` exits 141 without a stack trace", async () => {
    const big = "x".repeat(100_000);
    const first = await hh(dir, "exec", "--server", server, "--harness", "cut", "--input", big);
    const s = sessionOf(first.stderr);
    const errFile = join(dir, "epipe.err");
    const { execFile } = await import("node:child_process");
    const status = await new Promise<string>((resolve, reject) =>
      execFile(
        "bash",
        [
          "-c",
          `set -o pipefail; "${process.execPath}" "${BIN}" export --server ${server} --session ${s} 2>"${errFile}" | head -c 10 >/dev/null; echo $?`,
        ],
        { timeout: 120_000 },
        (err, stdout) => (err ? reject(err) : resolve(stdout.trim())),
      ),
    );
    expect(status).toBe("141");
    expect(readFileSync(errFile, "utf8")).toBe("");
  }, 300_000);
});
