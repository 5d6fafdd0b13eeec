// docs/architecture.md stays the map of the code. Invariant: every folder of src/ (and harnesses/) has
// a row in the layer table of .dependency-cruiser.cjs and in docs/architecture.md, and every source
// path the document names exists — so a newcomer following it never lands on a missing file.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const repo = resolve(import.meta.dirname, "../..");
const doc = readFileSync(join(repo, "docs/architecture.md"), "utf8");
const config = readFileSync(join(repo, ".dependency-cruiser.cjs"), "utf8");

/** The folders of the LAYERS table in .dependency-cruiser.cjs, as plain paths ("src/cli/"). */
function configFolders(): Set<string> {
  const table = config.slice(config.indexOf("const LAYERS"), config.indexOf("];\n", config.indexOf("const LAYERS")));
  return new Set(
    [...table.matchAll(/"((?:src|harnesses)[^"]*)"/g)].map((m) =>
      m[1]!
        .replace(/\(\?!.*?\)/g, "")
        .replace(/\\\\/g, "")
        .replace(/\$$/, ""),
    ),
  );
}

describe("docs/architecture.md", () => {
  it("everyFolderHasALayerInTheConfigAndTheDoc", () => {
    const folders = configFolders();
    const dirs = readdirSync(join(repo, "src"), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `src/${d.name}/`);
    for (const dir of [...dirs, "harnesses/"]) {
      expect(folders, `${dir} in .dependency-cruiser.cjs LAYERS`).toContain(dir);
      expect(doc, `${dir} in docs/architecture.md`).toContain(`\`${dir}`);
    }
  });

  it("everySourcePathItNamesExists", () => {
    const paths = [...doc.matchAll(/`((?:src|test|harnesses)\/[A-Za-z0-9_./-]+)`/g)].map((m) => m[1]!);
    expect(paths.length).toBeGreaterThan(30);
    const missing = paths.filter((p) => !existsSync(join(repo, p)));
    expect(missing).toEqual([]);
  });

  it("everyTestItNamesExistsWithThatTitle", () => {
    const rows = [...doc.matchAll(/`(test\/[A-Za-z0-9_./-]+\.ts)` "([^"]+?)(?:…)?"/g)];
    expect(rows.length).toBeGreaterThan(10);
    for (const [, file, title] of rows) {
      const text = readFileSync(join(repo, file!), "utf8");
      expect(text, `${file} has a test titled "${title}"`).toContain(title!.replace(/[,:]? *$/, ""));
    }
  });

  it('registryNamesOneThing: the harness registry; the other meanings have their own names ("Words")', () => {
    const files = (function walk(dir: string): string[] {
      return readdirSync(join(repo, dir), { withFileTypes: true }).flatMap((d) =>
        d.isDirectory()
          ? d.name === "gen"
            ? []
            : walk(`${dir}/${d.name}`)
          : d.name.endsWith(".ts")
            ? [`${dir}/${d.name}`]
            : [],
      );
    })("src");
    expect(files.filter((f) => /registry/i.test(f.split("/").pop()!))).toEqual([
      "src/placement/registry.ts",
      "src/server/registry-service.ts",
    ]);
    const declared = files.flatMap((f) => {
      const lines = readFileSync(join(repo, f), "utf8").split("\n");
      return lines.flatMap((line, i) => {
        const m = /^export (?:class|interface|type|const) (\w*Registry)\b/.exec(line);
        // A deprecated alias of an old name may stay for a release; it says so on the line before.
        return m && !lines[i - 1]?.includes("@deprecated") ? [`${f}: ${m[1]}`] : [];
      });
    });
    expect(declared).toEqual(["src/placement/registry.ts: HarnessRegistry"]);
    const words = doc.slice(doc.indexOf("## Words"), doc.indexOf("## Finding the owner"));
    expect(words).toContain("**registry** — the _harness registry_");
  });
});
