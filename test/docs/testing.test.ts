// docs/testing.md is executed: its example runs exactly as written with `node --test` (a TypeScript
// loader added, nothing rewritten) in a project where `harnesshost` is this checkout's built package,
// and the tsconfig it shows is the one `harnesshost init` writes.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { scaffoldFiles } from "../../src/cli/scaffold/files.js";
import { scaffoldVersions } from "../../src/cli/commands/init.js";
import { codeBlocks } from "./sh-script.js";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../..");
const doc = readFileSync(join(repo, "docs/testing.md"), "utf8");
const dir = mkdtempSync(join(tmpdir(), "hh-testing-doc-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("docs/testing.md", () => {
  it("theExampleRunsAsWrittenUnderNodeTest", async () => {
    const [example] = codeBlocks(doc, "1. An example", "ts");
    expect(example).toBeDefined();
    mkdirSync(join(dir, "node_modules"));
    // The package by name (this checkout, built: the test set-up keeps dist/ current) and what the
    // example imports besides it.
    symlinkSync(repo, join(dir, "node_modules/harnesshost"));
    for (const dep of ["zod", "tsx"]) symlinkSync(join(repo, "node_modules", dep), join(dir, "node_modules", dep));
    writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
    writeFileSync(join(dir, "example.test.ts"), example!);
    const res = await run(process.execPath, ["--import", "tsx", "--test", "example.test.ts"], { cwd: dir }).catch(
      (err: { stdout?: string; stderr?: string }) => err,
    );
    expect(res.stdout, `${res.stdout}\n${res.stderr}`).toMatch(/^# pass 1$/m);
    expect(res.stdout).toMatch(/^# fail 0$/m);
  }, 120_000);

  it("theTsconfigShownIsTheOneInitWrites", () => {
    const [shown] = codeBlocks(doc, "7. A new project", "json");
    const written = scaffoldFiles("x", scaffoldVersions())["tsconfig.json"];
    expect(JSON.parse(shown!)).toEqual(JSON.parse(written!));
  });
});
