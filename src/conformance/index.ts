// `harnesshost/conformance`: the tier conformance suite as a library. Invariant: conformanceSuite and
// runConformance run the very same checks as `harnesshost conformance`; vitest is imported only when
// conformanceSuite is called, so the CLI and runConformance work without it.
import { openSuite, type Suite } from "./runner.js";
import type { CheckResult, ConformanceOptionsInput } from "./types.js";

export {
  runConformance,
  openSuite,
  checksOf,
  CHECK_IDS,
  waitsChecksOf,
  WAITS_CHECK_IDS,
  upgradeCheckOf,
  UPGRADE_CHECK_IDS,
} from "./runner.js";
export type { Suite } from "./runner.js";
export { render, jsonReport, junitReport, prettyReport, progressLine, REPORTERS } from "./reporters/index.js";
export type { ReporterName } from "./reporters/index.js";
export { ConformanceOptions, TierOption, summarize } from "./types.js";
export type {
  CheckResult,
  CheckStatus,
  ConformanceOptionsInput,
  ProgressEvent,
  ProgressListener,
  Report,
  Tier,
} from "./types.js";
export type { Check, CheckOutcome } from "./checks/check.js";

export interface ConformanceSuiteOptions extends ConformanceOptionsInput {
  /** Per-check vitest timeout (ms). Default 120 000: checks start harness node processes. */
  readonly timeoutMs?: number;
}

/**
 * Declares one vitest `describe` with one `it` per check of the harness's tier. Await it at the top
 * level of a test file: the tier (with `tier: "auto"`) is read from the harness before the tests are
 * declared. A failed check fails its `it` with the check's evidence; a skipped one is reported skipped.
 */
export async function conformanceSuite(options: ConformanceSuiteOptions): Promise<void> {
  let vitest: typeof import("vitest");
  try {
    vitest = await import("vitest");
  } catch (err) {
    throw new Error("conformanceSuite must run inside vitest; use runConformance() elsewhere", { cause: err });
  }
  const { timeoutMs, ...input } = options;
  const suite: Suite = await openSuite(input);
  const timeout = timeoutMs ?? 120_000;
  vitest.describe(`harnesshost conformance: ${suite.options.harness} (${suite.tier})`, () => {
    vitest.afterAll(() => suite.close(), timeout);
    for (const check of suite.checks) {
      vitest.it(
        check.id,
        async (ctx) => {
          const result: CheckResult = await suite.run(check);
          switch (result.status) {
            case "pass":
              return;
            case "skip":
              ctx.skip(result.evidence);
              return;
            case "fail":
              throw new Error(`${check.id}: ${result.evidence}`);
          }
        },
        timeout,
      );
    }
  });
}
