// `harnesshost token digest` (docs/operations.md "Principals, roles and projects"): the line a server
// token file stores for a token read from stdin — its digest, never the token, on no stream, whatever
// the outcome; the line is one the server reads as the named principal.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseTokenFileText } from "../../src/server/token-file.js";
import { BIN, REPO } from "./bin.js";

const TOKEN = "s3cret-token-for-the-digest-test";

function digest(stdin: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, "token", "digest", ...args], {
    cwd: REPO,
    input: stdin,
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("harnesshost token digest", () => {
  it("printsTheServerLineOfATokenOnStdinAndNeverTheToken", () => {
    const r = digest(`${TOKEN}\n`, "--principal", "alice", "--roles", "operator,approver", "--projects", "payments");
    expect(r.code).toBe(0);
    const hex = createHash("sha256").update(TOKEN).digest("hex");
    expect(r.stdout).toBe(`sha256:${hex} principal=alice roles=operator,approver projects=payments\n`);
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
    const [entry] = parseTokenFileText(r.stdout).entries;
    expect(entry?.principal).toMatchObject({ name: "alice", roles: ["operator", "approver"] });
    expect(digest(TOKEN).stdout).toBe(`sha256:${hex}\n`);
    expect(digest(TOKEN, "--registrar", "node-eu1").stdout).toBe(`sha256:${hex} registrar=node-eu1\n`);
  });

  it.each([
    ["a token given as an argument", [TOKEN], "never from an argument"],
    ["an unknown role", ["--principal", "alice", "--roles", "root"], 'unknown role "root"'],
    ["roles without a principal", ["--roles", "reader"], "--roles and --projects need --principal"],
    ["a registrar with roles", ["--registrar", "r", "--roles", "reader"], "--registrar takes no"],
  ])("refusesWithExit2AndNoToken: %s", (_what, args, message) => {
    const r = digest(`${TOKEN}\n`, ...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it("refusesAnEmptyToken", () => {
    const r = digest("\n");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("a token is one word");
  });
});
