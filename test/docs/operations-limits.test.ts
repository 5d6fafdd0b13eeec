// docs/operations.md "Limits": its example runs as written (ports and bin pointed at this checkout),
// and `serve` refuses an unknown limit with a usage error before opening anything.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { bash, freePort, shBlocks, stopPidFiles, strictScript } from "./sh-script.js";

const repo = resolve(import.meta.dirname, "../..");
const bin = join(repo, "bin/harnesshost.js");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("docs/operations.md limits", () => {
  it("the --limit example starts a host with the limits set", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-limits-doc-"));
    dirs.push(dir);
    const doc = readFileSync(join(repo, "docs/operations.md"), "utf8");
    const [p1, p2] = [await freePort(), await freePort()];
    const script = shBlocks(doc, "Limits")
      .join("\n")
      .replaceAll(
        "npx harnesshost serve",
        `node ${bin} serve --data ${join(dir, "data")} --addr 127.0.0.1:${p1} --registry-addr 127.0.0.1:${p2} --http-addr 127.0.0.1:0`,
      )
      .replaceAll("npx harnesshost", `node ${bin}`)
      .replaceAll("127.0.0.1:7233", `127.0.0.1:${p1}`);
    const out = await bash(strictScript(script), dir, 180_000).finally(() => stopPidFiles(dir));
    expect(out).toMatch(/^stopped pid \d+$/m);
  }, 200_000);

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
