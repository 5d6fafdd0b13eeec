// scripts/bundle.mjs (the second step of `npm run build`, which `npm pack` runs through `prepare` while
// other processes run the bin): a rebuild of an unchanged tree rewrites no file of dist/bundle/, so a
// process loading the bundle's chunks meanwhile never finds one missing or half-written (a clean-clone
// CI run failed test/cli/read-only.test.ts with ERR_MODULE_NOT_FOUND for a chunk while a packing test
// rebuilt the bundle, which then removed dist/bundle/ first).
import { execFile } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const BUNDLE = join(ROOT, "dist/bundle");

/** Every file of dist/bundle/ with its inode and modification time: what a rewrite would change. */
function snapshot(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(BUNDLE, { recursive: true }).map(String).sort()) {
    const st = statSync(join(BUNDLE, name), { bigint: true });
    if (st.isFile()) out[name] = `${st.ino}:${st.mtimeNs}`;
  }
  return out;
}

describe("bundle rebuild", () => {
  it("aRebuildOfAnUnchangedTreeRewritesNoBundleFile", async () => {
    const before = snapshot();
    expect(Object.keys(before).length).toBeGreaterThan(0);
    await promisify(execFile)(process.execPath, ["scripts/bundle.mjs"], { cwd: ROOT });
    expect(snapshot()).toEqual(before);
  });
});
