// docs/python.md is executed: its Python blocks are the example files it names (which the SDK tests and
// the conformance suite run), and its ```sh blocks run as written in a directory holding a copy of
// python/ — pointed at this checkout's CLI, with the socket in a temp directory — printing the outputs
// their comments claim — through real npx from the installed tarball (test/docs/npx-doc.ts), in a
// folder of the shared project that also holds a copy of python/, as a reader's clone does. The vm section (image build --python with the SDK included, memory conformance
// on vm:IMAGE) runs where the vm runtime can (test/vm/vm-env.ts), and is skipped, saying why, elsewhere.
import { cpSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { projectWorkdir } from "../package/shared.js";
import { ROOT, isolateCaches, vmSkipReason } from "../vm/vm-env.js";
import { expectVmCounterPasses } from "../conformance/helpers.js";
import { runDoc } from "./npx-doc.js";
import { codeBlocks, shBlocks } from "./sh-script.js";

const guide = readFileSync(join(ROOT, "docs/python.md"), "utf8");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A folder of the project with the packed tarball installed, holding a copy of python/ as a clone does. */
async function workDir(): Promise<string> {
  const dir = await projectWorkdir("pydocs");
  dirs.push(dir);
  cpSync(join(ROOT, "python"), join(dir, "python"), { recursive: true, filter: (p) => !p.includes("__pycache__") });
  return dir;
}

describe("docs/python.md", () => {
  it.each([
    ["3. ", "echo.py"],
    ["4. ", "notes.py"],
    ["6. ", "counter.py"],
  ])("section %s shows python/examples/%s exactly", (section, file) => {
    const [block] = codeBlocks(guide, section, "python");
    expect(block).toBe(readFileSync(join(ROOT, "python/examples", file), "utf8"));
  });

  it("installs the package offline into a venv, serves echo.py with its ready line and passes conformance on its address", async () => {
    const dir = await workDir();
    const script = [...shBlocks(guide, "1. "), ...shBlocks(guide, "3. ")].join("\n");
    const out = await runDoc(script, dir, 300_000);
    const lines = out.split("\n");
    expect(lines).toContain("0.1.0");
    expect(lines).toContain(`ready unix://${join(dir, "pyecho.sock")}`);
    expect(out).toMatch(
      /^OK: 7 passed, 0 failed, 1 skipped — unix:\/\/\S+pyecho\.sock \(stateless, descriptor pyecho\)/m,
    );
  }, 300_000);

  it.skipIf(vmSkipReason() !== undefined)(
    "builds the SDK counter's vm image with the package included and passes the memory conformance on vm:IMAGE",
    async () => {
      const cache = isolateCaches();
      dirs.push(cache);
      const dir = await workDir();
      const out = await runDoc(shBlocks(guide, "6. ").join("\n"), dir, 900_000);
      expect(out).toMatch(/^image \S+pycounter-sdk sha256:[0-9a-f]{64} \(initramfs [\d.]+ MB/m);
      expectVmCounterPasses(out);
      expect(out).toMatch(
        /^OK: 7 passed, 0 failed, 1 skipped — vm:\S+pycounter-sdk \(memory, descriptor pycounter-sdk\)/m,
      );
    },
    900_000,
  );
});
