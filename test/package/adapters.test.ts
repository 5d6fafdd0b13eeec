// The framework adapters as a user installs them (docs/integrations.md): the packed tarball in an empty
// project, the frameworks added beside it as the peers they are. Invariants: each adapter subpath
// imports from plain Node; the core entry points load neither framework (they stay optional); a strict
// TypeScript consumer of both subpaths type-checks against the shipped declarations (on the floor Node
// only: tsc's verdict does not depend on the Node that runs it; strict-tsc.ts, OTHER_NODE).
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unbundled } from "../support/bundle-meta.js";
import { REPO, run } from "./packed.js";
import { ownConsumer } from "./shared.js";
import { inDir, itOnTheFloor, strictTsc } from "./strict-tsc.js";

/** The peers a user adds beside harnesshost. */
const PEERS = ["ai", "@ai-sdk/provider", "@openai/agents"];

type Entry = {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};
type Lock = { packages: Record<string, Entry> };

/**
 * Adds the peers to the consumer at exactly the versions (and dependency closure) this repository's
 * lockfile pins, and reinstalls offline from the npm cache the repository's own install filled.
 */
async function addPeers(dir: string): Promise<void> {
  const repo = JSON.parse(readFileSync(join(REPO, "package-lock.json"), "utf8")) as Lock;
  const lock = JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")) as Lock;
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  const queue = PEERS.map((name) => `node_modules/${name}`);
  for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
    const entry = repo.packages[path];
    if (!entry || lock.packages[path]) continue;
    // What the repository installs as a dev tool is, for the consumer, a dependency of a peer.
    const { dev: _dev, devOptional: _devOptional, ...kept } = entry as Entry & { dev?: boolean; devOptional?: boolean };
    lock.packages[path] = kept;
    const deps = { ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies };
    for (const dep of Object.keys(deps)) {
      const nested = `${path}/node_modules/${dep}`;
      queue.push(repo.packages[nested] ? nested : `node_modules/${dep}`);
    }
  }
  for (const name of PEERS) pkg.dependencies[name] = repo.packages[`node_modules/${name}`]?.version ?? "";
  const root = lock.packages[""] as { dependencies?: Record<string, string> };
  root.dependencies = pkg.dependencies;
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  writeFileSync(join(dir, "package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
  await run("npm", ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: dir });
  cpSync(join(REPO, "node_modules/better-sqlite3/build"), join(dir, "node_modules/better-sqlite3/build"), {
    recursive: true,
  });
}

let project: string;
beforeAll(async () => {
  // The tarball every test file shares (packed once per tree); a project of our own with the peers.
  ({ project } = await ownConsumer("adapters"));
  await addPeers(project);
}, 600_000);
afterAll(() => rmSync(project, { recursive: true, force: true }));

function inProject(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return inDir(project, cmd, args);
}

// The hook runs on the loader thread: writeSync, because what a process.stderr.write there still
// holds when the process exits is lost (Node 24 lost it in 3 of 15 runs of the bin's --help).
const TRACE = `import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(
  "import { writeSync } from 'node:fs'; export async function load(url, context, next) { if (url.startsWith('file:')) writeSync(2, 'LOADED ' + url + '\\\\n'); return next(url, context); }"));
// and require(): the bundle's vendor groups (zod, grpc-js, protobuf-es, pino) load by require().
import Module from "node:module";
import { writeSync } from "node:fs";
const load = Module._load;
Module._load = function (request, parent, isMain, ...rest) {
  try { const p = Module._resolveFilename(request, parent, isMain); if (p.startsWith("/")) writeSync(2, "LOADED " + p + "\\n"); } catch {}
  return load.call(this, request, parent, isMain, ...rest);
};
`;

const CONSUMER_TS = `import { generateText, stepCountIs, tool } from "ai";
import { Agent } from "@openai/agents";
import { z } from "zod";
import type { Harness } from "harnesshost/sdk";
import { aiSdkHarness, aiSdkModelProvider, aiSdkToolExecutor, fileApplied, type AiSdkTurn } from "harnesshost/ai-sdk";
import { openAIAgentsHarness, openAIAgentsToolExecutor } from "harnesshost/openai-agents";

const weatherTools = {
  weather: tool({
    description: "The weather.",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }: { city: string }) => ({ city, tempC: 20 }),
  }),
};
export const hosted: Harness = aiSdkHarness({
  id: "weather",
  model: "gpt-4.1",
  tools: weatherTools,
  applied: fileApplied("/tmp/applied"),
  run: ({ model, tools, messages, signal }: AiSdkTurn<typeof weatherTools>) =>
    generateText({ model, tools, messages, stopWhen: stepCountIs(5), abortSignal: signal }),
});
export const executor = aiSdkToolExecutor(weatherTools);
export const provider: typeof aiSdkModelProvider = aiSdkModelProvider;
const triage = new Agent({ name: "triage", model: "gpt-4.1" });
export const agents: Harness = openAIAgentsHarness({ id: "triage", agent: triage });
export const agentsExecutor = openAIAgentsToolExecutor(triage);
`;

describe("adapters installed into an empty project", () => {
  it("theCoreEntryPointsLoadNeitherFramework", async () => {
    writeFileSync(join(project, "trace.mjs"), TRACE);
    writeFileSync(
      join(project, "core.mjs"),
      `await import("harnesshost"); await import("harnesshost/sdk"); await import("harnesshost/agent"); await import("harnesshost/client");\n`,
    );
    const traced = await inProject(process.execPath, ["--import", "./trace.mjs", "core.mjs"]);
    expect(traced.code).toBe(0);
    const loaded = unbundled(traced.stderr.split("\n").filter((l) => l.startsWith("LOADED ")));
    expect(loaded.some((l) => l.endsWith("/dist/src/index.js"))).toBe(true);
    expect(loaded.filter((l) => /\/node_modules\/(ai|@ai-sdk|@openai)\/|\/dist\/src\/adapters\//.test(l))).toEqual([]);
  });

  it("eachAdapterSubpathImportsFromPlainNode", async () => {
    writeFileSync(
      join(project, "adapters.mjs"),
      `import * as aiSdk from "harnesshost/ai-sdk";
import * as agents from "harnesshost/openai-agents";
console.log(JSON.stringify({
  aiSdk: [typeof aiSdk.aiSdkHarness, typeof aiSdk.aiSdkModelProvider, typeof aiSdk.aiSdkToolExecutor, typeof aiSdk.fileApplied],
  agents: [typeof agents.openAIAgentsHarness, typeof agents.openAIAgentsToolExecutor, typeof agents.memoryApplied],
}));
`,
    );
    const res = await inProject(process.execPath, ["adapters.mjs"]);
    expect(res.stderr).toBe("");
    expect(JSON.parse(res.stdout)).toEqual({
      aiSdk: ["function", "function", "function", "function"],
      agents: ["function", "function", "function"],
    });
  }, 120_000);

  // Two full type-checks with skipLibCheck false over the frameworks' large declarations: minutes on a
  // busy 2-core machine.
  itOnTheFloor(
    "aStrictTypeScriptConsumerOfBothAdaptersTypeChecks",
    async () => {
      const src = join(project, "ts-adapters");
      mkdirSync(src, { recursive: true });
      writeFileSync(join(src, "consumer.ts"), CONSUMER_TS);
      for (const res of await strictTsc(project, "adapters-", ["ts-adapters/*.ts"])) {
        // The frameworks' own declarations do not pass skipLibCheck false under these options (their
        // errors are listed and kept out of the verdict); ours and the consumer's code must be clean.
        const errors = res.output.split("\n").filter((l) => /error TS/.test(l));
        const theirs = /^node_modules\/(ai|@ai-sdk|@openai|json-schema)\//;
        expect(
          errors.filter((l) => !theirs.test(l)),
          res.name,
        ).toEqual([]);
        expect(errors.length === 0 || res.code !== 0, res.name).toBe(true);
      }
    },
    600_000,
  );
});
