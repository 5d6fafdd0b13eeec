// `harnesshost serve` as a real process: it prints its listening line once ready, the CLI's --server
// commands work against it (sessions and harness registry, with a token file), and SIGTERM shuts it
// down gracefully with exit 0.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/run.js";

const BIN = resolve(import.meta.dirname, "../../bin/harnesshost.js");
const TOKEN = "cli-token-3f9e";

let dir = "";
let proc: ChildProcess | undefined;
let stderr = "";
let addr = "";
let registry = "";
let exited: Promise<number | null> = Promise.resolve(null);

/** Runs the CLI in this process; returns exit code, stdout lines and stderr lines. */
async function cli(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => void out.push(t), err: (t) => void err.push(t) });
  return { code, out, err };
}

function json(lines: readonly string[]): Record<string, unknown> {
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? "") as Record<string, unknown>;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-serve-"));
  const tokenFile = join(dir, "tokens");
  writeFileSync(tokenFile, `# operators\n${TOKEN}\n`);
  proc = spawn(
    process.execPath,
    [
      BIN,
      "serve",
      "--data",
      join(dir, "data"),
      "--addr",
      "127.0.0.1:0",
      "--registry-addr",
      "127.0.0.1:0",
      "--http-addr",
      "127.0.0.1:0",
      "--token-file",
      tokenFile,
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  exited = new Promise((res) => proc?.once("exit", (code) => res(code)));
  const ready = await new Promise<RegExpExecArray>((res, rej) => {
    proc?.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      const m = /harnesshost listening addr=(\S+) registry=(\S+) journal=(\S+) harnesses=(\S+)/.exec(stderr);
      if (m) res(m);
    });
    void exited.then((code) => rej(new Error(`serve exited (${code}) before listening:\n${stderr}`)));
  });
  addr = ready[1] ?? "";
  registry = ready[2] ?? "";
  expect(ready[4]?.split(",")).toContain("echo");
});

afterAll(async () => {
  if (proc && proc.exitCode === null) {
    proc.kill("SIGKILL");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe("harnesshost serve", () => {
  it("serves the session commands over --server with --json", async () => {
    const auth = ["--server", addr, "--token-file", join(dir, "tokens"), "--json"];
    const exec = await cli("exec", "--input", "hi", ...auth);
    expect(exec.code).toBe(0);
    const turn = json(exec.out);
    expect(turn["output"]).toBe("echo:hi");
    const uid = String(turn["session"]);
    expect(uid).toMatch(/^sess-/);

    const get = json((await cli("get", "--session", uid, ...auth)).out);
    expect(get["harness"]).toBe("echo");
    expect(String(get["last_seq"])).toBe(String(turn["last_seq"]));

    const list = json((await cli("list", ...auth)).out);
    expect((list["sessions"] as { metadata: { uid: string } }[]).map((s) => s.metadata.uid)).toEqual([uid]);

    const replay = json((await cli("replay", "--session", uid, ...auth)).out);
    expect(replay).toMatchObject({ outputs: ["echo:hi"], model_calls: 0 });

    const verify = await cli("verify", "--session", uid, ...auth);
    expect(verify.code).toBe(0);
    expect(json(verify.out)).toMatchObject({ ok: true, records: Number(turn["last_seq"]) });

    const refused = await cli("list", "--server", addr, "--json");
    expect(refused.code).toBe(6);
    expect(refused.err.join("\n")).toMatch(/bearer token/);
  });

  it("serves the harness registry commands", async () => {
    const auth = ["--server", registry, "--token-file", join(dir, "tokens"), "--json"];
    const reg = await cli(
      "harness",
      "register",
      "--name",
      "mine",
      "--address",
      "127.0.0.1:1",
      "--resumability",
      "STATELESS_REPLAY",
      "--descriptor-id",
      "echo",
      ...auth,
    );
    expect(reg.code).toBe(0);
    expect(json(reg.out)).toMatchObject({
      outcome: "REGISTER_OUTCOME_CREATED",
      harness: { metadata: { name: "mine" }, source: "HARNESS_SOURCE_REGISTERED" },
    });
    const got = json((await cli("harness", "get", "--name", "mine", "--observe", ...auth)).out);
    expect(got).toMatchObject({
      spec: { remote: { address: "127.0.0.1:1" }, descriptor_id: "echo" },
      state: "HARNESS_STATE_ACTIVE",
    });
    expect(String(got["observe_error"])).not.toBe("");
    const retired = json((await cli("harness", "retire", "--name", "mine", "--reason", "done", ...auth)).out);
    expect(retired).toMatchObject({ state: "HARNESS_STATE_RETIRED", retire_reason: "done" });
    const listed = json((await cli("harness", "list", "--include-retired", ...auth)).out);
    expect((listed["harnesses"] as { metadata: { name: string } }[]).map((h) => h.metadata.name)).toContain("mine");
    const usage = await cli(
      "harness",
      "register",
      "--name",
      "x",
      "--address",
      "127.0.0.1:1",
      "--resumability",
      "SOMETIMES",
      ...auth,
    );
    expect(usage.code).toBe(2);
  });

  it("exits 0 on SIGTERM after a graceful shutdown", async () => {
    proc?.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/"msg":"stopped"/);
    expect(stderr).not.toContain(TOKEN);
  });
});
