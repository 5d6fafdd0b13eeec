import { fileURLToPath } from "node:url";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { TEST_PROJECTS, type TestProjectName } from "./test/projects.js";
import { LongestFirstSequencer } from "./test/support/longest-first.js";

const src = (path: string): string => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

/**
 * How each project runs (docs/architecture.md, "Tests"; which files belong to which is
 * test/projects.ts). unit is in-process work only, so files run in worker threads, one per core,
 * without a fresh module graph per file (a unit file must not lean on module state another left);
 * integration files mostly wait on the processes, servers and PostgreSQL they start, so more run
 * at once than there are cores, also on one module graph per worker; e2e files boot VMs, browsers, clusters and packs that each fill a
 * core. Projects with different worker counts run one after another (vitest's groupOrder).
 */
const RUN: Record<TestProjectName, TestProjectInlineConfiguration["test"]> = {
  unit: {
    pool: "threads",
    maxWorkers: 2,
    // A worker runs its unit files one after another on one module graph: loading the modules again
    // for every file was most of the project's CPU (about 95 s against 37 s for the same 597 tests).
    isolate: false,
    sequence: { groupOrder: 0 },
    setupFiles: ["./test/support/in-process-only.ts"],
  },
  // An integration worker, too, runs its files on one module graph: loading it again for every file
  // was 43 of the project's 292 CPU-s (249 with it shared; 568 tests, the same verdicts).
  integration: { pool: "forks", maxWorkers: 3, isolate: false, sequence: { groupOrder: 1 } },
  e2e: {
    pool: "forks",
    maxWorkers: 2,
    sequence: { groupOrder: 2 },
    globalSetup: ["./test/support/dist-current.ts", "./test/vm/image-cache.ts"],
  },
};

// Tests that start processes or servers get generous timeouts: the machine has two cores and CI
// shares them. Nothing here asserts speed; that lives in bench/. The package's own entry points
// resolve to source here (docs examples import them by name); test/package/ checks the built package.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^harnesshost$/, replacement: src("index.ts") },
      { find: /^harnesshost\/(sdk|agent|client|conformance|testing)$/, replacement: src("$1/index.ts") },
      { find: /^harnesshost\/(ai-sdk|openai-agents)$/, replacement: src("adapters/$1/index.ts") },
    ],
  },
  test: {
    // Child-process tests run the compiled CLI (bin/harnesshost.js); this rebuilds dist/ first when stale.
    // …and test/package/tree-hash-setup.ts fixes which tree the packed-tarball tests share this run.
    globalSetup: ["./test/support/dist-current.ts", "./test/package/tree-hash-setup.ts"],
    // The few files that take minutes start first (test/projects.ts, LONGEST_FIRST).
    sequence: { sequencer: LongestFirstSequencer },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ["default", "./test/summary-reporter.ts"],
    projects: TEST_PROJECTS.map(({ name, include, exclude }) => ({
      extends: true,
      test: { name, include: [...include], exclude: [...exclude], ...RUN[name] },
    })),
  },
});
