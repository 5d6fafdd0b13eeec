// Every ```sh block in README.md and docs/*.md is run by a test, as written, through real npx from the
// installed tarball (test/docs/npx-doc.ts) — or is listed below with the reason it cannot be. A new
// block in a new section fails here until a test runs it.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "../package/packed.js";

/** Which test runs the sh blocks of each `file#section`. */
const RUNNERS: Readonly<Record<string, string>> = {
  "README.md#Walkthrough 1: one process, no server": "test/docs/readme.test.ts",
  "README.md#Walkthrough 2: a server and a harness node of your own": "test/docs/readme.test.ts",
  "README.md#Walkthrough 3: memory snapshots (the `counter` harness)": "test/docs/readme.test.ts",
  "README.md#Walkthrough 4: approvals": "test/docs/readme.test.ts",
  "README.md#Walkthrough 5: a Python harness in a micro-VM (the `vm` runtime)": "test/vm/vm.test.ts",
  "README.md#Walkthrough 6: an agent with tools and compaction (the `notes` harness)": "test/docs/readme.test.ts",
  "README.md#Scaling": "test/multihost/readme-scaling.test.ts",
  "docs/cli.md#Background servers": "test/cli/background.test.ts",
  "docs/conformance.md#Running it in CI": "test/docs/authoring.test.ts",
  "docs/console.md#The API over HTTP": "test/docs/console.test.ts",
  "docs/harness-authoring.md#0. Install": "test/docs/authoring.test.ts",
  "docs/harness-authoring.md#5. Serving a harness as a node": "test/docs/authoring.test.ts",
  "docs/harness-authoring.md#6. Registering and running it": "test/docs/authoring.test.ts",
  "docs/harness-authoring.md#7. Running a module in a host-owned node (the spawned runtime)":
    "test/docs/authoring.test.ts",
  "docs/harness-authoring.md#8. Checking it with the conformance suite": "test/docs/authoring.test.ts",
  "docs/migrating-from-go.md#Bring your sessions": "test/docs/migrating-from-go.test.ts",
  "docs/migrating-from-go.md#Commands, flags and behaviour": "test/docs/migrating-from-go.test.ts",
  "docs/operations.md#Limits": "test/docs/operations-limits.test.ts",
  "docs/operations.md#Principals, roles and projects": "test/docs/operations-principals.test.ts",
  "docs/python.md#1. Install": "test/docs/python.test.ts",
  "docs/python.md#3. A stateless harness: echo": "test/docs/python.test.ts",
  "docs/python.md#6. The memory tier: a RAM counter in a micro-VM": "test/docs/python.test.ts",
};

/** Blocks no test runs as written, by their first line, and why. */
const NOT_RUN: Readonly<Record<string, string>> = {
  "npm ci && npx harnesshost serve":
    "README's opening: a foreground server on the default ports (tests never bind them) and the whole suite",
  "npm install harnesshost":
    "harness-authoring §0's install: what test/package/shared.ts does for every doc test (offline, the packed tarball)",
  "npm run build   # tsc: src/ and harnesses/ → dist/; then the bundle (dist/bundle/) and the console":
    "packaging.md, in a checkout: `npm pack` (test/package/shared.ts) runs it through `prepare`",
};

interface Block {
  readonly where: string;
  readonly firstLine: string;
}

function shellBlocks(file: string): Block[] {
  const text = readFileSync(join(REPO, file), "utf8");
  const out: Block[] = [];
  let section = "";
  let inBlock = false;
  let first: string | undefined;
  for (const line of text.split("\n")) {
    if (!inBlock && line.startsWith("## ")) section = line.slice(3);
    if (!inBlock && line === "```sh") {
      inBlock = true;
      first = undefined;
    } else if (inBlock && line.startsWith("```")) {
      inBlock = false;
      out.push({ where: `${file}#${section}`, firstLine: first ?? "" });
    } else if (inBlock && first === undefined) first = line;
  }
  return out;
}

const FILES = [
  "README.md",
  ...readdirSync(join(REPO, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

describe("shell blocks in the docs", () => {
  it("everyShellBlockIsRunByATestOrSaysWhyNot", () => {
    const blocks = FILES.flatMap(shellBlocks);
    expect(blocks.length).toBeGreaterThan(20);
    const unaccounted = blocks.filter((b) => RUNNERS[b.where] === undefined && NOT_RUN[b.firstLine] === undefined);
    expect(unaccounted).toEqual([]);
  });

  it("everyRunnerRunsTheBlocksThroughRealNpxNotRewrittenToTheSourceBin", () => {
    for (const runner of new Set(Object.values(RUNNERS))) {
      const source = readFileSync(join(REPO, runner), "utf8");
      expect(source, runner).toMatch(/from "(\.\/|\.\.\/docs\/)npx-doc\.js"/);
      expect(source, runner).not.toMatch(/replaceAll\(\s*"npx harnesshost/);
    }
  });
});
