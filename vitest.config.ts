import { defineConfig } from "vitest/config";

// Tests that start processes or servers get generous timeouts: the machine has two cores and CI
// shares them. Nothing here asserts speed; that lives in bench/.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default", "./test/summary-reporter.ts"],
  },
});
