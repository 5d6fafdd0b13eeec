// Read-only commands on a read-only data directory: after a host stopped
// cleanly, `verify`, `replay`, `export`, `get` and `list` run with a user who cannot write the data
// directory or the journal file (as root, the commands run as uid 65534 through setpriv).
import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/run.js";

const run = promisify(execFile);
const SRC_BIN = resolve(import.meta.dirname, "../../bin/harnesshost.js");
let dir = "";
let session = "";

/** Runs the CLI as a user without write access to `dir` (uid 65534 when this process is root). */
async function asReader(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const root = process.getuid?.() === 0;
  const [cmd, args] = root
    ? ["setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, SRC_BIN, ...argv]]
    : [process.execPath, [SRC_BIN, ...argv]];
  try {
    const { stdout, stderr } = await run(cmd, args as string[], { timeout: 120_000 });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === "number" ? err.code : 1, out: err.stdout ?? "", err: err.stderr ?? "" };
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-readonly-"));
  const out: string[] = [];
  const code = await main(["exec", "--data", dir, "--input", "hi", "--json"], {
    out: (t) => void out.push(t),
    err: () => undefined,
  });
  expect(code).toBe(0);
  session = (JSON.parse(out[0] ?? "{}") as { session: string }).session;
  // A cleanly closed host leaves no WAL frames behind.
  expect(existsSync(join(dir, "journal.db-wal"))).toBe(false);
  for (const f of readdirSync(dir)) chmodSync(join(dir, f), 0o444);
  chmodSync(dir, 0o555);
}, 120_000);

afterAll(() => {
  chmodSync(dir, 0o755);
  rmSync(dir, { recursive: true, force: true });
});

describe("read-only data directory", () => {
  it("readOnlyCommandsWorkOnAReadOnlyDataDirectory", async () => {
    const verify = await asReader("verify", "--data", dir);
    expect(verify.err).toBe("");
    expect(verify.code).toBe(0);
    expect(verify.out).toContain(`ok ${session} 5 records`);
    const replay = await asReader("replay", "--data", dir, "--session", session);
    expect(replay.code, replay.err).toBe(0);
    expect(replay.out.trim()).toBe("echo:hi");
    const exported = await asReader("export", "--data", dir, "--session", session);
    expect(exported.code, exported.err).toBe(0);
    expect(exported.out.trim().split("\n")).toHaveLength(5);
    expect(readdirSync(dir)).toEqual(["journal.db"]);
  }, 300_000);

  it("a write on a read-only data directory fails with a clear error", async () => {
    const exec = await asReader("exec", "--data", dir, "--session", session, "--input", "more");
    expect(exec.code).toBe(1);
    expect(exec.err).toMatch(/readonly|read-only/i);
  }, 120_000);
});
