// The bundled CLI and the package's entry points are one copy of the host (scripts/bundle.mjs): a harness
// module loaded by `serve` (local runtime) that imports `harnesshost` and `harnesshost/sdk` by name
// throws the very HostError class the host checks with `instanceof`, so the turn's failure keeps its
// code (FAILED_PRECONDITION, exit 4) instead of becoming an unknown failure (exit 1) — which is what a
// bundle holding its own copy of the errors module beside the exports' copy answers.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServeProcess, startLoopbackServe } from "../reliability/serve-process.js";
import { hh, REPO } from "./bin.js";

const dir = mkdtempSync(join(tmpdir(), "hh-one-copy-"));
let serve: ServeProcess | undefined;
let server = "";

beforeAll(async () => {
  ({ serve, server } = await startLoopbackServe(join(dir, "data"), {
    "--harness": `refuser=local:${join(REPO, "test/fixtures/one-copy/refuser.mjs")}`,
  }));
}, 300_000);

afterAll(async () => {
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("one copy of the host", () => {
  it("aHostErrorThrownByAHarnessImportingThePackageByNameKeepsItsCode", async () => {
    const res = await hh(dir, "exec", "--server", server, "--harness", "refuser", "--input", "hi");
    expect(res.stderr).toContain("the refuser refuses every turn");
    expect(res.stderr).not.toMatch(/turn failed/);
    expect(res.code).toBe(4);
  }, 300_000);
});
