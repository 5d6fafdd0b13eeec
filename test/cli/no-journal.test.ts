// Read-only commands never create a journal, and an explicitly empty --session is a usage error:
// through the real command, on a path that does not exist, nothing appears on disk.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hh } from "./bin.js";

const dir = mkdtempSync(join(tmpdir(), "hh-ro-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("read-only commands (real bin)", () => {
  it("verify, list, get, export and replay on a missing journal exit 3 and create neither file nor folder", async () => {
    const typo = join(dir, "typo", "journal.db");
    const s = ["--session", "sess-000000000000000000000000"];
    for (const args of [["verify"], ["list"], ["get", ...s], ["export", ...s], ["replay", ...s]]) {
      const res = await hh(dir, ...args, "--journal", typo);
      expect(res.code, args[0]).toBe(3);
      expect(res.stderr, args[0]).toContain(`no journal at ${typo}`);
      expect(res.stdout, args[0]).toBe("");
    }
    const viaData = await hh(dir, "verify", "--data", join(dir, "nodata"), "--json");
    expect(viaData.code).toBe(3);
    expect(JSON.parse(viaData.stderr)).toMatchObject({ error: { code: "NOT_FOUND" } });
    expect(readdirSync(dir)).toEqual([]);
  }, 300_000);

  it("exec --session '' is a usage error (exit 2) and creates nothing", async () => {
    const journal = join(dir, "empty-session.db");
    const res = await hh(dir, "exec", "--journal", journal, "--session", "", "--input", "hi");
    expect(res.code).toBe(2);
    expect(res.stdout).toBe("");
    expect(res.stderr).toMatch(/--session is empty/);
    expect(existsSync(journal)).toBe(false);
  }, 300_000);

  it("exec without --session still creates the journal it names", async () => {
    const journal = join(dir, "new", "j.db");
    const res = await hh(dir, "exec", "--journal", journal, "--input", "hi");
    expect(res).toMatchObject({ code: 0, stdout: "echo:hi\n" });
    expect(existsSync(journal)).toBe(true);
    const verify = await hh(dir, "verify", "--journal", journal);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain("1/1 sessions intact");
  }, 300_000);
});
