// The Python SDK (python/, docs/python.md) from the project's test run: it installs offline with pip and
// imports as one module; its own unittest suite (python/tests) passes against a real host over gRPC,
// run on the installed copy; Debian's mypy is clean on the package and the examples (strict); and the
// descriptor set it ships is the `buf build` of proto/. /usr/bin/python3 with python3-grpcio and
// python3-protobuf is a hard requirement (scripts/ensure-test-deps.mjs installs them, and mypy).
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PYTHON, ROOT, run } from "./python-env.js";

let dir = "";
let site = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-pysdk-"));
  site = join(dir, "site");
  // pip builds in the source tree; a copy keeps the checkout clean.
  const src = join(dir, "src");
  cpSync(join(ROOT, "python"), src, { recursive: true, filter: (p) => !p.includes("__pycache__") });
  const installed = await run(PYTHON, [
    "-m",
    "pip",
    "install",
    "--no-build-isolation",
    "--no-deps",
    "--no-index",
    "--target",
    site,
    src,
  ]);
  expect(installed.code, installed.stdout + installed.stderr).toBe(0);
}, 120_000);

afterAll(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

describe("the Python SDK", () => {
  it("installsOfflineWithPipAndImportsAsOneModuleWithItsTypeMarker", async () => {
    const r = await run(
      PYTHON,
      [
        "-c",
        "import harnesshost, os; print(harnesshost.__file__); print(os.path.exists(os.path.join(os.path.dirname(harnesshost.__file__), 'py.typed')))",
      ],
      { PYTHONPATH: site },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split("\n")).toEqual([join(site, "harnesshost", "__init__.py"), "True", ""]);
  });

  it("itsUnittestSuiteCoversEverySinkCallAgainstARealHostAndPasses", async () => {
    const r = await run(PYTHON, ["-m", "unittest", "discover", "-s", join(ROOT, "python", "tests"), "-v"], {
      PYTHONPATH: site,
    });
    expect(r.code, r.stderr.slice(-6000)).toBe(0);
    expect(r.stderr).toMatch(/^Ran \d+ tests in [\d.]+s\n\nOK\n/m);
    // The promises of the issue, each a test that ran (none was skipped; OK says none failed).
    expect(r.stderr).not.toMatch(/\.\.\. skipped/);
    for (const name of [
      "test_aModelCallIsAnsweredByTheHostsModelAndJournaled",
      "test_aLocalToolsResultAndUsageAreJournaledInCallOrder",
      "test_aPlainFunctionHarnessRunsInAThreadWithTheBlockingSink",
      "test_aToolCallRunsAtMostOnceAcrossAHostKill",
      "test_anApprovalGateParksTheTurnAndAnApprovedResumeRunsTheToolOnce",
      "test_aQuestionParksTheTurnAndTheAnswerReachesTheHarness",
      "test_theNotesExampleWritesOnlyAfterAnApprovalAndAnswersOtherwiseOverTheConversation",
      "test_cancelReachesAnAsyncRunAndTheTurnStaysResumable",
      "test_cancelReachesAPlainFunctionRunThroughSinkCancelled",
      "test_aToolCallWithoutAnIdempotencyKeyIsRefusedByTheHostWithAClearError",
      "test_argumentsThatAreNotJsonAreRefusedBeforeTheyReachTheWire",
      "test_aModelReplyWithAnotherCorrelationIdFailsTheTurnWithOneEnd",
      "test_aStreamWhoseFirstFrameIsNotStartIsRefusedBeforeTheHarnessRuns",
    ])
      expect(r.stderr).toContain(`${name} (`);
  }, 300_000);

  it("mypyStrictIsCleanOnThePackageAndTheExamples", async () => {
    const r = await run(
      "mypy",
      [
        "--config-file",
        join(ROOT, "python", "pyproject.toml"),
        "--cache-dir",
        join(dir, "mypy-cache"),
        join(ROOT, "python", "harnesshost"),
        join(ROOT, "python", "examples"),
      ],
      { MYPYPATH: join(ROOT, "python") },
    );
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Success: no issues found in \d+ source files/m);
  }, 120_000);

  it("thePackagedDescriptorSetIsTheBuildOfProto", async () => {
    const built = join(dir, "built.binpb");
    const r = await run(join(ROOT, "node_modules", ".bin", "buf"), ["build", "-o", built]);
    expect(r.code, r.stderr).toBe(0);
    const shipped = readFileSync(join(ROOT, "python", "harnesshost", "agentsessions.binpb"));
    expect(shipped.equals(readFileSync(built))).toBe(true);
  });
});
