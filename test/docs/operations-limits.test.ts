// docs/operations.md "Limits": its example runs as written through real npx in a project that installed
// the packed tarball (test/docs/npx-doc.ts: ports remapped), and `serve` refuses an unknown limit with
// a usage error before opening anything.
import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { projectWorkdir } from "../package/shared.js";
import { runDoc } from "./npx-doc.js";
import { shBlocks } from "./sh-script.js";

const repo = resolve(import.meta.dirname, "../..");
const bin = join(repo, "bin/harnesshost.js");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("docs/operations.md limits", () => {
  it("the --limit example starts a host with the limits set", async () => {
    const dir = await projectWorkdir("limits-doc");
    dirs.push(dir);
    const doc = readFileSync(join(repo, "docs/operations.md"), "utf8");
    const out = await runDoc(shBlocks(doc, "Limits").join("\n"), dir);
    expect(out).toMatch(/^stopped pid \d+$/m);
  }, 600_000);

  it("serve refuses an unknown limit with exit 2 naming it", async () => {
    const run = promisify(execFile);
    const err = await run("node", [bin, "serve", "--limit", "bogus=1"]).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).toBe(2);
    expect(err?.stderr).toContain('unknown limit "bogus"');
  }, 120_000);
});
