// Generated code is committed; this fails when `buf generate` would change it, or when `buf lint`
// finds a problem in the protos (docs/protocol.md §2.1, §11.1).
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../..");
const env = { ...process.env, PATH: `${join(repo, "node_modules/.bin")}:${process.env["PATH"] ?? ""}` };
const out = mkdtempSync(join(tmpdir(), "hh-gen-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

describe("protos", () => {
  it("buf lint is clean", async () => {
    await expect(run("buf", ["lint"], { cwd: repo, env })).resolves.toBeDefined();
  });

  it("src/gen is exactly what buf generate produces", async () => {
    await run("buf", ["generate", "-o", out], { cwd: repo, env });
    const fresh = files(join(out, "src/gen"))
      .map((f) => relative(join(out, "src/gen"), f))
      .sort();
    const committed = files(join(repo, "src/gen"))
      .map((f) => relative(join(repo, "src/gen"), f))
      .sort();
    expect(committed).toEqual(fresh);
    for (const f of fresh) {
      expect(readFileSync(join(repo, "src/gen", f), "utf8"), f).toBe(readFileSync(join(out, "src/gen", f), "utf8"));
    }
  });
});
