// docs/versioning.md's code runs as written: the Tally module migrates a version-1 snapshot into its
// own state (and refuses an unknown version), and the replay-check library example checks a recorded
// session. Only the package specifiers are pointed at this checkout's sources.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { decodeActor, encodeActor } from "../../src/snapshot/codec.js";
import { isHostError } from "../../src/errors/index.js";
import type { Harness } from "../../src/harness/types.js";
import { codeBlocks } from "./sh-script.js";

const REPO = resolve(import.meta.dirname, "../..");
const DOC = readFileSync(join(REPO, "docs/versioning.md"), "utf8");
const dir = mkdtempSync(join(tmpdir(), "hh-versioning-doc-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function pointed(code: string): string {
  return code
    .replaceAll('"harnesshost/sdk"', JSON.stringify(join(REPO, "src/sdk/index.ts")))
    .replaceAll('"harnesshost"', JSON.stringify(join(REPO, "src/index.ts")));
}

describe("docs/versioning.md", () => {
  it("the Tally example migrates a version-1 state once and refuses an unknown version", async () => {
    const [code] = codeBlocks(DOC, "Memory snapshots across versions", "ts");
    expect(code).toBeDefined();
    const file = join(dir, "tally.ts");
    writeFileSync(file, pointed(code ?? ""));
    const mod = (await import(pathToFileURL(file).href)) as { default: () => Harness & { tally: { n: number } } };
    const v1 = encodeActor({ count: 3 }, { tag: { version: "1", schema: "1" } });
    const fresh = mod.default();
    const tag = { version: "2", schema: "tally" };
    const restored = decodeActor(v1, fresh, { tag, migrate: fresh.migrate?.bind(fresh) });
    expect(restored.tally).toEqual({ n: 3 });
    expect(Object.keys(restored)).not.toContain("count");
    const v7 = encodeActor({ count: 3 }, { tag: { version: "7", schema: "7" } });
    const other = mod.default();
    let refused: unknown;
    try {
      decodeActor(v7, other, { tag, migrate: other.migrate?.bind(other) });
    } catch (err) {
      refused = err;
    }
    expect(isHostError(refused, "failed_precondition")).toBe(true);
  });

  it("the replay-check library example checks a recorded session", async () => {
    const [code] = codeBlocks(DOC, "Checking new code before rollout", "ts");
    expect(code).toBeDefined();
    mkdirSync(join(dir, "sessions"), { recursive: true });
    copyFileSync(join(REPO, "test/fixtures/replay-check/versioned-v1.jsonl"), join(dir, "sessions/s1.jsonl"));
    writeFileSync(
      join(dir, "new.ts"),
      `export { default } from ${JSON.stringify(join(REPO, "test/fixtures/harnesses/versioned-v2.ts"))};\n`,
    );
    const file = join(dir, "check.ts");
    writeFileSync(file, `${pointed(code ?? "")}\nexport { result };\n`);
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const mod = (await import(pathToFileURL(file).href)) as { result: unknown };
      expect(mod.result).toEqual({ label: "s1", ok: true, turns: 2 });
    } finally {
      process.chdir(cwd);
    }
  });
});
