// The repository stands alone: a clone has everything its code, tests and docs cite. Invariant: no
// file under src/, test/, docs/, bench/, scripts/, proto/, harnesses/ nor the README cites the design
// document that lived outside the repository (its sections are in docs/protocol.md and
// docs/architecture.md) or a path beside the clone.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const repo = resolve(import.meta.dirname, "../..");
const TEXT = /\.(ts|mts|js|mjs|cjs|md|proto|py|json|jsonc|sh|yaml|yml|txt)$/;
const ROOTS = ["src", "test", "docs", "bench", "scripts", "proto", "harnesses"];

// Spelled in pieces so that this file does not match itself.
const FORBIDDEN = [`SPEC ${"§"}`, `..${"/"}shared`];

function textFiles(): string[] {
  const files = ["README.md"];
  for (const root of ROOTS) {
    for (const f of readdirSync(join(repo, root), { recursive: true, encoding: "utf8" })) {
      if (TEXT.test(f) && !f.split("/").includes("node_modules")) files.push(join(root, f));
    }
  }
  return files;
}

describe("the repository stands alone", () => {
  it("noFileCitesADocumentOutsideTheClone", () => {
    const files = textFiles();
    expect(files.length).toBeGreaterThan(100);
    const hits: string[] = [];
    for (const file of files) {
      const lines = readFileSync(join(repo, file), "utf8").split("\n");
      lines.forEach((line, i) => {
        for (const needle of FORBIDDEN) if (line.includes(needle)) hits.push(`${file}:${i + 1}: ${needle}`);
      });
    }
    expect(hits).toEqual([]);
  });
});
