// The closing line of test/summary-reporter.ts cannot hide a failure: a real vitest run of fixture
// files (test/fixtures/summary-reporter) whose beforeAll, afterAll or loading fails must print a
// non-zero "failed", and a run that exits 0 prints "0 failed".
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";

const CONFIG = "test/fixtures/summary-reporter/vitest.config.ts";
const VITEST = "node_modules/vitest/vitest.mjs";

/** Runs vitest on the fixture files whose path contains `filter`; its exit code and last line. */
function runFixtures(filter: string): Promise<{ code: number | null; line: string; output: string }> {
  // The child is a fresh vitest run, not a worker of this one.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("VITEST")));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [VITEST, "run", "--config", CONFIG, filter], {
      env: { ...env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString();
    });
    child.once("error", reject);
    child.once("close", (code) => {
      const lines = output.trimEnd().split("\n");
      resolve({ code, line: lines.at(-1) ?? "", output });
    });
  });
}

describe("the summary reporter's closing line", () => {
  it("counts a file whose beforeAll fails as failed, and its tests as not run", async () => {
    const r = await runFixtures("before-all-fails");
    expect(r.code, r.output).toBe(1);
    expect(r.line).toBe("0 passed, 1 failed, 2 not run");
  });

  it("counts every failed test, hook and file across a run", async () => {
    // test-fails: 1 failed test + 1 passed; before-all-fails: 1 failed hook, 2 not run;
    // describe-setup-fails: 1 failed suite hook, 1 not run, 1 passed; after-all-fails: 1 passed,
    // 1 failed hook; load-fails: 1 failed file; passes: 1 passed, 1 skipped on purpose.
    const r = await runFixtures("fixture");
    expect(r.code, r.output).toBe(1);
    expect(r.line).toBe("4 passed, 5 failed, 1 skipped, 3 not run");
  });

  it("counts a run that fails with no test file as failed", async () => {
    const r = await runFixtures("no-such-fixture");
    expect(r.code, r.output).toBe(1);
    expect(r.line).toBe("0 passed, 1 failed");
  });

  it("says 0 failed for a run that exits 0", async () => {
    const r = await runFixtures("passes");
    expect(r.code, r.output).toBe(0);
    expect(r.line).toBe("1 passed, 0 failed, 1 skipped");
  });
});
