import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (path: string): string => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

// Tests that start processes or servers get generous timeouts: the machine has two cores and CI
// shares them. Nothing here asserts speed; that lives in bench/. The package's own entry points
// resolve to source here (docs examples import them by name); test/package/ checks the built package.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^harnesshost$/, replacement: src("index.ts") },
      { find: /^harnesshost\/(sdk|agent|client|conformance|testing)$/, replacement: src("$1/index.ts") },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    // Child-process tests run the compiled CLI (bin/harnesshost.js); this rebuilds dist/ first when stale.
    // …and test/package/tree-hash-setup.ts fixes which tree the packed-tarball tests share this run.
    globalSetup: ["./test/support/dist-current.ts", "./test/package/tree-hash-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default", "./test/summary-reporter.ts"],
  },
});
