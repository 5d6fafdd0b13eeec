// `harnesshost init DIR` (docs/testing.md §7), through the real command: it writes the project into a
// new or empty directory, pinned to the running version; it never writes over anything (a non-empty
// directory is ALREADY_EXISTS, exit 4, and nothing changes); a missing directory argument is a usage error.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { packageVersion } from "../../src/cli/version.js";
import { hh } from "./bin.js";

const dir = mkdtempSync(join(tmpdir(), "hh-init-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("harnesshost init", () => {
  it("initWritesARunnableProjectPinnedToTheRunningVersion", async () => {
    const res = await hh(dir, "init", "My Agent");
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`created My Agent with harnesshost ${packageVersion()}: package.json, tsconfig.json`);
    expect(res.stdout).toContain('  cd "My Agent"\n  npm install\n  npm test\n');
    const pkg = JSON.parse(readFileSync(join(dir, "My Agent/package.json"), "utf8")) as Record<string, unknown>;
    expect(pkg).toMatchObject({
      name: "my-agent",
      type: "module",
      dependencies: { harnesshost: packageVersion() },
      scripts: { test: expect.any(String), serve: expect.any(String), conformance: expect.any(String) },
    });
    expect(readdirSync(join(dir, "My Agent/src")).sort()).toEqual(["desk.ts", "greeter.ts", "tools.ts"]);
  });

  it("initNeverWritesIntoANonEmptyDirectory", async () => {
    const taken = join(dir, "taken");
    mkdirSync(taken);
    writeFileSync(join(taken, "package.json"), "mine\n");
    const res = await hh(dir, "init", "taken");
    expect(res.code).toBe(4);
    expect(res.stderr).toMatch(
      /^harnesshost: taken already exists and is not empty; init writes only into a new or empty directory/,
    );
    expect(readdirSync(taken)).toEqual(["package.json"]);
    expect(readFileSync(join(taken, "package.json"), "utf8")).toBe("mine\n");
  });

  it("initWithoutADirectoryIsAUsageError", async () => {
    const res = await hh(dir, "init");
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/init needs the new project's directory: init my-agent/);
  });
});
