// scripts/ensure-test-deps.mjs (npm test's first step) never lets the suite start without its PostgreSQL:
// a server that does not answer is exit 1 with the fix, not a note that the tests "will skip" (they
// fail). Runs the real script as npm does, against the real PostgreSQL and against a closed port.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";

const SCRIPT = "scripts/ensure-test-deps.mjs";

function runScript(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SCRIPT], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A loopback port nothing listens on: bound by the kernel, then released. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address === null || typeof address === "string") throw new Error("no TCP address");
      server.close(() => resolve(address.port));
    });
  });
}

describe("ensure-test-deps", () => {
  it("exits 0 and prints nothing when PostgreSQL answers", async () => {
    const env = { ...process.env };
    delete env["HARNESSHOST_TEST_PG_URL"];
    const r = await runScript(env);
    expect(r, r.stderr).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  it("exits 1 with the fix when PostgreSQL does not answer", async () => {
    const port = await closedPort();
    const r = await runScript({
      ...process.env,
      HARNESSHOST_TEST_PG_URL: `postgres://postgres@127.0.0.1:${port}/test`,
    });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toContain(`PostgreSQL is not answering on 127.0.0.1:${port}`);
    expect(r.stderr).toContain("Fix: start that server, or unset HARNESSHOST_TEST_PG_URL");
    expect(r.stdout + r.stderr).not.toMatch(/skip/i);
  });
});
