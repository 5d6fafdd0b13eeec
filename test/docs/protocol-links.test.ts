// A cheap guard on the links between tests and the spec: every `docs/protocol.md §N` (or §N.M) cited
// in test/, src/ or proto/ names a section that exists, and protocol.md's own cross-references and the
// authoring guide's resolve too. docs/protocol.md numbers its sections for exactly these citations.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const repo = resolve(import.meta.dirname, "../..");
const protocol = readFileSync(join(repo, "docs/protocol.md"), "utf8");

/** Section numbers declared by `## §N Title` and `### §N.M Title` headings. */
const sections = new Set([...protocol.matchAll(/^#{2,3} §(\d+(?:\.\d+)?) /gm)].map((m) => m[1]!));

function sourceFiles(dir: string, ext: RegExp): string[] {
  return readdirSync(join(repo, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => ext.test(f) && !f.includes("node_modules"))
    .map((f) => join(dir, f));
}

interface Citation {
  readonly file: string;
  readonly section: string;
}

function citationsIn(file: string, text: string): Citation[] {
  return [...text.matchAll(/docs\/protocol\.md[\s,;:]+§(\d+(?:\.\d+)?)/g)].map((m) => ({ file, section: m[1]! }));
}

describe("docs/protocol.md section links", () => {
  it("declares numbered sections §1–§11, each with its subsections in order", () => {
    for (let n = 1; n <= 11; n++) expect(sections, `§${n}`).toContain(String(n));
    for (const s of sections) {
      const [top] = s.split(".");
      expect(sections, `§${s} lives under §${top}`).toContain(top);
    }
  });

  it("every docs/protocol.md §N cited in test/, src/ and proto/ exists", () => {
    const files = [
      ...sourceFiles("test", /\.ts$/),
      ...sourceFiles("src", /\.ts$/),
      ...sourceFiles("proto", /\.proto$/),
    ];
    const citations = files.flatMap((f) => citationsIn(f, readFileSync(join(repo, f), "utf8")));
    // This file and the authoring tests cite sections themselves, so the scan must find some.
    expect(citations.length).toBeGreaterThan(0);
    const dangling = citations.filter((c) => !sections.has(c.section)).map((c) => `${c.file}: §${c.section}`);
    expect(dangling).toEqual([]);
  });

  it("protocol.md's and the authoring guide's own §references resolve", () => {
    const guide = readFileSync(join(repo, "docs/harness-authoring.md"), "utf8");
    const refs = [protocol, guide].flatMap((text) => [...text.matchAll(/§(\d+(?:\.\d+)?)/g)].map((m) => m[1]!));
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter((r) => !sections.has(r))).toEqual([]);
  });
});
