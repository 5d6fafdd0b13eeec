// docs/console.md's HTTP examples run as written — `npx harnesshost` through real npx in a project that
// installed the packed tarball (test/docs/npx-doc.ts: ports remapped, nothing else) — and what each
// prints is what its comment says.
import { readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { projectWorkdir } from "../package/shared.js";
import { runDoc } from "./npx-doc.js";
import { shBlocks } from "./sh-script.js";

const repo = resolve(import.meta.dirname, "../..");
const doc = readFileSync(join(repo, "docs/console.md"), "utf8");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("docs/console.md", () => {
  it("the API over HTTP: curl examples print what their comments say", async () => {
    const dir = await projectWorkdir("console-doc");
    dirs.push(dir);
    const out = await runDoc(shBlocks(doc, "The API over HTTP").join("\n"), dir);
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
  }, 600_000);
});
