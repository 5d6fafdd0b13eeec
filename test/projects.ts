// Which vitest project each test file runs in, by what it costs (docs/architecture.md, "Tests").
// Invariant: every test/**/*.test.ts is in exactly one project (test/projects.test.ts asks vitest);
// a folder belongs to one project, and the few files that cost more or less than their folder are
// named in MOVED. A new file goes where its folder goes; a new folder must be added to one list.
//
// - unit: runs inside the test's own process — no child process, no PostgreSQL (loopback servers
//   the test itself starts in-process are fine). `npm run test:unit` is the inner loop.
// - integration: starts processes (the CLI, `serve`, harness nodes, Python), uses PostgreSQL.
// - e2e: the shell docs, the packed package, the browser console, the VM runtime, the multi-host
//   clusters and chaos, the RSS soaks and the bench smoke test.

export type TestProjectName = "unit" | "integration" | "e2e";

/** Folders under test/, each wholly in one project unless a file of it is in MOVED. */
const FOLDERS: Record<TestProjectName, readonly string[]> = {
  unit: [
    "agent",
    "canon",
    "controller",
    "effects",
    "errors",
    "harnesses",
    "host",
    "layers",
    "limits",
    "model",
    "node",
    "placement",
    "sdk",
    "security",
    "server",
    "snapshot",
    "wire",
  ],
  integration: [
    "adapters",
    "cli",
    "client",
    "conformance",
    "http",
    "interop",
    "journal",
    "obs",
    "projection",
    "proto",
    "python",
    "reliability",
    "reporter",
    "runtime",
    "scripts",
    "testing",
    "tiers",
    "versions",
    "waits",
  ],
  e2e: ["bench", "console", "docs", "multihost", "package", "scaffold", "vm"],
};

/** Files whose cost differs from their folder's, and the project they run in instead. */
const MOVED: Readonly<Record<string, TestProjectName>> = {
  // in-process files of integration folders
  "test/cli/command-table.test.ts": "unit",
  "test/cli/go-cli.test.ts": "unit",
  "test/cli/go-flags.test.ts": "unit",
  "test/cli/paths.test.ts": "unit",
  "test/client/client.test.ts": "unit",
  "test/conformance/reporters.test.ts": "unit",
  "test/conformance/probe-draws.test.ts": "unit",
  "test/http/compressed-bodies.test.ts": "unit",
  "test/http/connect.test.ts": "unit",
  "test/journal/export.test.ts": "unit",
  "test/journal/fenced-append.test.ts": "unit",
  "test/journal/sqlite-handles.test.ts": "unit",
  "test/journal/plan.test.ts": "unit",
  "test/projection/lean-log.test.ts": "unit",
  "test/reliability/concurrency.test.ts": "unit",
  "test/reliability/runaway-harness.test.ts": "unit",
  "test/tiers/placement-refusal.test.ts": "unit",
  "test/versions/http.test.ts": "unit",
  "test/obs/dashboard.test.ts": "unit",
  "test/obs/fast-metrics.test.ts": "unit",
  "test/obs/log-payloads.test.ts": "unit",
  "test/obs/process-metrics.test.ts": "unit",
  "test/runtime/fork.test.ts": "unit",
  "test/runtime/local-actors.test.ts": "unit",
  "test/waits/exit-semantics.test.ts": "unit",
  "test/waits/wire-park.test.ts": "unit",
  // files of unit folders that start processes or use PostgreSQL
  "test/agent/conformance.test.ts": "integration",
  "test/errors/edges.test.ts": "integration",
  "test/node/pod-settings.test.ts": "integration",
  "test/security/hostile-node-drain.test.ts": "integration",
  "test/security/snapshot-corrupt.test.ts": "integration",
  "test/security/transport.test.ts": "integration",
  "test/server/cancel-delete.test.ts": "integration",
  "test/server/faults.test.ts": "integration",
  "test/server/serve-process.test.ts": "integration",
  "test/server/serve-deferred.test.ts": "integration",
  "test/snapshot/pg-store.test.ts": "integration",
  // in process, but each pushes tens of seconds of hostile traffic under client deadlines: with the
  // processes of integration, not beside the CPU-bound unit files
  "test/security/hostile-clients-http.test.ts": "integration",
  "test/security/hostile-http-bodies.test.ts": "integration",
  // the RSS and memory soaks and the single-host chaos run (crash-kill) of integration folders
  "test/reliability/crashkill.test.ts": "e2e",
  "test/reliability/memory-pressure.test.ts": "e2e",
  "test/security/hostile-clients-http-rss.test.ts": "e2e",
  "test/security/hostile-clients-rss.test.ts": "e2e",
};

/** Test files directly in test/ (not in a folder). */
const TOP_LEVEL: TestProjectName = "unit";

export interface TestProject {
  readonly name: TestProjectName;
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}

function folderOf(file: string): string | undefined {
  return /^test\/([^/]+)\//.exec(file)?.[1];
}

function ownerOfFolder(folder: string): TestProjectName | undefined {
  return (Object.keys(FOLDERS) as TestProjectName[]).find((p) => FOLDERS[p].includes(folder));
}

/** The projects, as vitest include/exclude globs (relative to the repository root). */
export const TEST_PROJECTS: readonly TestProject[] = (Object.keys(FOLDERS) as TestProjectName[]).map((name) => {
  const movedIn = Object.keys(MOVED).filter((f) => MOVED[f] === name);
  const movedOut = Object.keys(MOVED).filter((f) => {
    const folder = folderOf(f);
    return MOVED[f] !== name && (folder === undefined ? TOP_LEVEL === name : ownerOfFolder(folder) === name);
  });
  return {
    name,
    include: [
      ...FOLDERS[name].map((folder) => `test/${folder}/**/*.test.ts`),
      ...(TOP_LEVEL === name ? ["test/*.test.ts"] : []),
      ...movedIn,
    ],
    exclude: movedOut,
  };
});

/**
 * Files that start before the rest of their project, longest first: each takes minutes of one worker
 * (wall time in a clean-clone `npm test`: vm.test 291 s, package 112 s, adapters 108 s, authoring 72 s,
 * python 70 s, vm/node 44 s), so one that started last would end the run alone. A clean clone has no
 * durations cached for vitest's own order (which is then by file size), so they are named here
 * (test/support/longest-first.ts).
 */
export const LONGEST_FIRST: readonly string[] = [
  "test/vm/vm.test.ts",
  "test/package/package.test.ts",
  "test/package/adapters.test.ts",
  "test/docs/authoring.test.ts",
  "test/docs/python.test.ts",
  "test/vm/node.test.ts",
];
