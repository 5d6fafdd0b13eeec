// Prints one plain closing line after the run, "P passed, F failed[, S skipped][, N not run]", so any
// CI reader can tell how many tests ran without knowing vitest's own summary format.
// Invariant: the line says "0 failed" only when nothing failed — F counts failed tests, every error
// of a failed hook or of a file that failed to load (each is one failure), every error raised outside
// any test, and a run vitest ends as failed for any other reason. "skipped" is a test skipped on purpose (skip, todo, only, ctx.skip); "not run" is
// a test a failed beforeAll kept from running.
import type { Reporter, TestCase, TestModule, TestRunEndReason, TestSuite } from "vitest/node";

/** True when a suite or file around the test failed on its own (a hook threw, or loading threw). */
function cutByFailedHook(test: TestCase): boolean {
  let p: TestSuite | TestModule = test.parent;
  for (;;) {
    if (p.errors().length > 0) return true;
    if (p.type === "module") return false;
    p = p.parent;
  }
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<unknown>,
    reason: TestRunEndReason,
  ): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    let notRun = 0;
    for (const mod of testModules) {
      let failedHere = 0;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failedHere++;
        else if (cutByFailedHook(test)) notRun++;
        else skipped++;
      }
      for (const entity of [mod, ...mod.children.allSuites()]) failedHere += entity.errors().length;
      // A file vitest marks failed counts at least once, whatever the reason it gives.
      if (mod.state() === "failed" && failedHere === 0) failedHere = 1;
      failed += failedHere;
    }
    // A run vitest ends as failed or interrupted with nothing above to show for it (no test file
    // matched, say) is still one failure.
    if (reason !== "passed" && failed === 0) failed = 1;
    const tail = `${skipped > 0 ? `, ${skipped} skipped` : ""}${notRun > 0 ? `, ${notRun} not run` : ""}`;
    process.stdout.write(`\n${passed} passed, ${failed} failed${tail}\n`);
  }
}
