// docs/console.md's HTTP examples run as written (ports and `npx harnesshost` pointed at this checkout),
// and what each prints is what its comment says.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bash, freePort, shBlocks, stopPidFiles, strictScript } from "./sh-script.js";

const repo = resolve(import.meta.dirname, "../..");
const doc = readFileSync(join(repo, "docs/console.md"), "utf8");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function localize(script: string): Promise<string> {
  let text = script.replaceAll("npx harnesshost", `node ${join(repo, "bin/harnesshost.js")}`);
  for (const port of ["7233", "7234", "7235", "7243", "7244", "7245"])
    text = text.replaceAll(`127.0.0.1:${port}`, `127.0.0.1:${await freePort()}`);
  return strictScript(text);
}

describe("docs/console.md", () => {
  it("the API over HTTP: curl examples print what their comments say", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-console-doc-"));
    dirs.push(dir);
    const script = await localize(shBlocks(doc, "The API over HTTP").join("\n"));
    const out = await bash(script, dir, 240_000).finally(() => stopPidFiles(dir));
    const lines = out.split("\n");
    expect(lines[0]).toMatch(/^\{"metadata":\{.*"uid":"sess-[0-9a-f]{24}".*\},"harness":"echo"/);
    expect(lines).toContain('"chunk":"echo:hi"');
    expect(lines).toContain('{"ok":true,"records":"5","headSeq":"5"}');
    expect(lines).toContain("echo COMPUTE_LIVE");
    expect(lines).toContain("ask,askcounter,counter,echo,question");
    expect(lines).toContain(
      '{"code":"invalid_argument","message":"unknown state \\"parked\\" (states are none, live, warm, cold, terminated)"} 400',
    );
    expect(lines).toContain('{"code":"not_found","message":"session sess-nope not found"} 404');
    expect(out).toMatch(
      /\{"code":"unimplemented","message":"agentsessions\.v1\.HarnessRegistry\.RetireHarness: [^"]*"\} 501/,
    );
    expect(lines).toContain('{"code":"permission_denied","message":"invalid bearer token"} 403');
    expect(lines).toContain("{}");
    expect(lines.filter((l) => /^stopped pid \d+$/.test(l))).toHaveLength(2);
  });
});
