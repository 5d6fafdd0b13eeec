// The published package: what `npm pack` ships and whether its manifest resolves. Invariants: the
// tarball holds dist/, bin/, proto/, docs/, README, LICENSE and package.json only (no tests, no bench,
// no TypeScript sources outside docs/examples); publint and attw find nothing to report.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packRepo, REPO, run, type Packed } from "./packed.js";

const SHIPPED = /^(dist\/|bin\/|proto\/|docs\/|README\.md$|LICENSE$|package\.json$)/;

let packed: Packed;
beforeAll(async () => {
  packed = await packRepo();
}, 240_000);
afterAll(() => rmSync(packed.dir, { recursive: true, force: true }));

describe("npm package", () => {
  it("the tarball ships only the whitelisted files", () => {
    expect(packed.files.filter((f) => !SHIPPED.test(f))).toEqual([]);
    expect(packed.files.filter((f) => /(^|\/)(test|bench)\//.test(f) || /\.test\.[jt]s$/.test(f))).toEqual([]);
    expect(packed.files).toContain("bin/harnesshost.js");
    expect(packed.files).toContain("dist/src/cli/run.js");
    expect(packed.files).toContain("dist/src/index.d.ts");
    expect(packed.files).toContain("dist/src/index.js.map");
    expect(packed.files).toContain("proto/agentsessions/v1/session.proto");
    expect(packed.files).toContain("LICENSE");
  });

  it("publint reports nothing, warnings included", async () => {
    const bin = join(REPO, "node_modules/publint/src/cli.js");
    const { stdout } = await run(process.execPath, [bin, "run", packed.tarball, "--strict"], { cwd: packed.dir });
    expect(stdout).toMatch(/All good!/);
  });

  it("attw finds no problem for ESM consumers (node16 and bundler resolution)", async () => {
    // The package is ESM-only (docs/packaging.md): the esm-only profile exits non-zero on any problem
    // for node16-esm or bundler resolution; node10 and require() from CommonJS are out of scope.
    const bin = join(REPO, "node_modules/@arethetypeswrong/cli/dist/index.js");
    const { stdout } = await run(process.execPath, [bin, packed.tarball, "--profile", "esm-only", "--format", "json"], {
      cwd: packed.dir,
      maxBuffer: 64 * 1024 * 1024,
    });
    const report = JSON.parse(stdout) as { analysis: { problems: { resolutionKind?: string }[] } };
    const esm = report.analysis.problems.filter(
      (p) => p.resolutionKind === "node16-esm" || p.resolutionKind === "bundler",
    );
    expect(esm).toEqual([]);
  });
});
