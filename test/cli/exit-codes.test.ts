// The CLI's exit statuses, --json errors and per-command help, through the real command: one table
// (src/cli/exit-codes.ts, printed in docs/cli.md) decides every status.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { STATUS_CODES } from "../../src/client/errors.js";
import { ExitCode, exitCodeOf } from "../../src/cli/exit-codes.js";
import { commands } from "../../src/cli/commands/index.js";
import { hh, REPO } from "./bin.js";

const dir = mkdtempSync(join(tmpdir(), "hh-exit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const journal = join(dir, "j.db");

describe("exit codes (real bin)", () => {
  it("docs/cli.md carries the exit-code table exactly as exitCodeOf maps every status", () => {
    const doc = readFileSync(join(REPO, "docs/cli.md"), "utf8");
    for (const status of STATUS_CODES) {
      const row = doc.split("\n").find((l) => l.startsWith("|") && l.includes(`\`${status}\``));
      expect(row, status).toBeDefined();
      expect(row!.split("|")[1]!.trim(), status).toBe(String(exitCodeOf(status)));
    }
  }, 300_000);

  it("every command's --help lists the connection flags it accepts and the exit statuses", async () => {
    for (const name of ["exec", "get", "verify"]) {
      const res = await hh(dir, name, "--help");
      expect(res.code, name).toBe(0);
      for (const flag of ["--server", "--journal", "--data", "--token-file", "--tls-ca", "--tls-cert", "--json"])
        expect(res.stdout, `${name} ${flag}`).toContain(`  ${flag} `);
      expect(res.stdout).toMatch(/exit status: 0 ok, 1 check failed, 2 usage, 3 not found/);
    }
    const harness = await hh(dir, "harness", "--help");
    expect(harness.stdout).toContain("  --token-file ");
    expect(commands.map((c) => c.name)).toContain("harness");
  }, 300_000);

  it("a usage error exits 2 and with --json prints one error document on stderr", async () => {
    const res = await hh(dir, "get", "--journal", journal, "--json");
    expect(res.code).toBe(ExitCode.Usage);
    expect(res.stdout).toBe("");
    expect(JSON.parse(res.stderr)).toEqual({ error: { code: "INVALID_ARGUMENT", message: "--session is required" } });
    expect(existsSync(journal)).toBe(false);
  }, 300_000);

  it("an unknown session exits 3 (NOT_FOUND); a refused precondition exits 4 (FAILED_PRECONDITION)", async () => {
    const first = await hh(dir, "exec", "--journal", journal, "--harness", "ask", "--input", "hi", "--json");
    expect(first.code).toBe(ExitCode.Parked);
    const s = (JSON.parse(first.stdout) as { session: string }).session;
    const missing = await hh(dir, "get", "--journal", journal, "--session", "sess-000000000000000000000000", "--json");
    expect(missing.code).toBe(ExitCode.NotFound);
    expect(JSON.parse(missing.stderr)).toMatchObject({ error: { code: "NOT_FOUND" } });
    const parked = await hh(dir, "exec", "--journal", journal, "--session", s, "--input", "more", "--json");
    expect(parked.code).toBe(ExitCode.Refused);
    expect(JSON.parse(parked.stderr)).toMatchObject({ error: { code: "FAILED_PRECONDITION" } });
    const human = await hh(dir, "exec", "--journal", journal, "--session", s, "--input", "more");
    expect(human.code).toBe(ExitCode.Refused);
    expect(human.stderr).toMatch(/^harnesshost: .+\n$/);
  }, 300_000);

  it("a host nobody listens on exits 6 (UNAVAILABLE)", async () => {
    const res = await hh(dir, "get", "--server", "127.0.0.1:1", "--session", "sess-000000000000000000000000", "--json");
    expect(res.code).toBe(ExitCode.Unavailable);
    expect(JSON.parse(res.stderr)).toMatchObject({ error: { code: "UNAVAILABLE" } });
  }, 300_000);
});
