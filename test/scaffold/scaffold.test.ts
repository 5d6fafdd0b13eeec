// `harnesshost init` as a new user runs it (docs/testing.md §7): the packed tarball installed into an
// empty directory, `npx harnesshost init my-agent` there, then the project's own `npm test`, `npm run
// typecheck`, `npm run conformance` and `npm run serve` — the scripts as written, nothing rewritten.
// The install is offline (test/package/consumer.ts): the tarball and its dependency closure; the
// project's build tools (typescript and @types/node, devDependencies that closure leaves out) are the
// versions this repository pins, linked into the install. The time from `init` to the first
// passing `npm test` is printed (a figure for the report, never asserted).
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../docs/sh-script.js";
import type { Packed } from "../package/packed.js";
import { ownConsumer } from "../package/shared.js";
import { inDir } from "../package/strict-tsc.js";

let packed: Packed;
let consumer = "";
let project = "";
let serving: ChildProcess | undefined;

beforeAll(async () => {
  // The tarball every test file shares (packed once per tree), in a consumer project of our own with
  // the TypeScript the scaffold's type-check runs (installed offline, as installConsumer does).
  ({ packed, project: consumer } = await ownConsumer("scaffold", ["typescript", "@types/node"]));
  project = join(consumer, "my-agent");
}, 600_000);

afterAll(() => {
  if (serving?.pid !== undefined && serving.exitCode === null) process.kill(-serving.pid, "SIGKILL");
  rmSync(consumer, { recursive: true, force: true });
});

/** Resolves once the child's stderr matched `pattern` (rejects if it exits first). */
function waitForStderr(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
      if (pattern.test(text)) resolve(text);
    });
    child.once("exit", (code) => reject(new Error(`exited ${code} before ${pattern}: ${text}`)));
  });
}

describe("a project from harnesshost init", () => {
  it("aScaffoldedProjectPassesItsOwnTestsTypeCheckAndConformance", async () => {
    const init = await inDir(consumer, "npx", ["harnesshost", "init", "my-agent"]);
    expect(init.code, init.stderr).toBe(0);
    const pkg = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
      type: string;
      dependencies: Record<string, string>;
    };
    expect(pkg.type).toBe("module");
    expect(pkg.dependencies["harnesshost"]).toBe(packed.version);

    const test = await inDir(project, "npm", ["test"]);
    expect(test.code, `${test.stdout}\n${test.stderr}`).toBe(0);
    expect(test.stdout).toMatch(/^# pass 3$/m);
    expect(test.stdout).toMatch(/^# fail 0$/m);

    const typecheck = await inDir(project, "npm", ["run", "typecheck"]);
    expect(typecheck.code, `${typecheck.stdout}\n${typecheck.stderr}`).toBe(0);

    const conformance = await inDir(project, "npm", ["run", "conformance"]);
    expect(conformance.code, `${conformance.stdout}\n${conformance.stderr}`).toBe(0);
    expect(conformance.stdout.match(/^OK: \d+ passed, 0 failed/gm)).toHaveLength(2);
  }, 600_000);

  it("itsServeScriptServesBothHarnessesWithItsTools", async () => {
    const addr = `127.0.0.1:${await freePort()}`;
    serving = spawn(
      "npm",
      ["run", "serve", "--", "--addr", addr, "--registry-addr", "off", "--http-addr", "off", "--log-level", "warn"],
      { cwd: project, detached: true, stdio: ["ignore", "pipe", "pipe"] },
    );
    const listening = await waitForStderr(serving, /harnesshost listening .*\n/);
    expect(listening).toMatch(/harnesses=\S*greeter\S*/);
    expect(listening).toMatch(/harnesses=\S*desk\S*/);
    const greet = await inDir(project, "npx", [
      "harnesshost",
      "exec",
      "--server",
      addr,
      "--harness",
      "greeter",
      "--input",
      "Ada",
    ]);
    expect(greet.code, greet.stderr).toBe(0);
    expect(greet.stdout).toContain("echo:Ada");
    const stopped = new Promise((resolve) => serving?.once("exit", resolve));
    process.kill(-(serving.pid ?? 0), "SIGTERM");
    await stopped;
  }, 300_000);
});
