// A session keeps its harness for life (docs/cli.md), through the real command: `exec --session S
// --harness X` with another harness is refused FAILED_PRECONDITION (exit 4) with the command that
// starts a new session, nothing is written, and `get` still shows the harness every turn ran on.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hh } from "./bin.js";

const dir = mkdtempSync(join(tmpdir(), "hh-harness-rule-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the harness of a session (real bin)", () => {
  it("harnessChangeIsRefused: another --harness on an existing session is exit 4 and changes nothing", async () => {
    const first = await hh(dir, "exec", "--data", dir, "--harness", "echo", "--input", "hi", "--json");
    expect(first.code).toBe(0);
    const session = (JSON.parse(first.stdout) as { session: string }).session;
    const before = await hh(dir, "get", "--data", dir, "--session", session);
    expect(before.stdout).toMatch(/ harness=echo last_seq=\d+ /);

    const switched = await hh(dir, "exec", "--data", dir, "--session", session, "--harness", "counter", "--input", "x");
    expect(switched.code).toBe(4);
    expect(switched.stdout).toBe("");
    expect(switched.stderr).toContain(`session ${session} runs harness "echo"; a session keeps its harness for life`);
    expect(switched.stderr).toContain("harnesshost exec --harness counter --input");
    const asJson = await hh(
      dir,
      "exec",
      "--data",
      dir,
      "--session",
      session,
      "--harness",
      "ask",
      "--input",
      "x",
      "--json",
    );
    expect(asJson.code).toBe(4);
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: { code: "FAILED_PRECONDITION" } });

    const after = await hh(dir, "get", "--data", dir, "--session", session);
    expect(after.stdout).toBe(before.stdout);

    const same = await hh(dir, "exec", "--data", dir, "--session", session, "--harness", "echo", "--input", "again");
    expect(same.code).toBe(0);
    expect(same.stdout).toBe("echo:again\n");
  }, 300_000);
});
