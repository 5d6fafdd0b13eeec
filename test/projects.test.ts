// Every test file runs in exactly one vitest project (test/projects.ts), so a new file or folder can
// never be silently left out of `npm test`, nor run twice. Asked of vitest itself: the specifications
// it would run for the repository's own vitest.config.ts, set against every test/**/*.test.ts on disk.
import { readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createVitest } from "vitest/node";
import { LONGEST_FIRST } from "./projects.js";
import { LongestFirstSequencer } from "./support/longest-first.js";

const REPO = resolve(import.meta.dirname, "..");

function testFiles(dir: string): string[] {
  return readdirSync(join(REPO, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" ? [] : testFiles(path);
    return e.name.endsWith(".test.ts") ? [path] : [];
  });
}

describe("test projects", () => {
  it("everyTestFileBelongsToExactlyOneProject: vitest puts each test/**/*.test.ts in one of unit, integration, e2e", async () => {
    const vitest = await createVitest("test", { root: REPO, config: join(REPO, "vitest.config.ts"), watch: false });
    try {
      const specs = await vitest.globTestSpecifications();
      const projectsOf = new Map<string, string[]>();
      for (const spec of specs) {
        const file = relative(REPO, spec.moduleId);
        projectsOf.set(file, [...(projectsOf.get(file) ?? []), spec.project.name]);
      }
      expect(new Set(vitest.projects.map((p) => p.name))).toEqual(new Set(["unit", "integration", "e2e"]));
      const files = testFiles("test").sort();
      expect(files.length).toBeGreaterThan(0);
      const wrong = files
        .map((f) => ({ file: f, projects: projectsOf.get(f) ?? [] }))
        .filter((x) => x.projects.length !== 1);
      expect(wrong, "files in no project or in several (add the folder or file to test/projects.ts)").toEqual([]);
      expect([...projectsOf.keys()].sort()).toEqual(files);
    } finally {
      await vitest.close();
    }
  });

  it("theLongestFilesStartFirstAndTheSequencerOnlyReorders: every file comes back once, LONGEST_FIRST leading in its order", async () => {
    const vitest = await createVitest("test", { root: REPO, config: join(REPO, "vitest.config.ts"), watch: false });
    try {
      // The config's own sequencer (loaded through vite, so a class of its own, not this import).
      const Sequencer = vitest.config.sequence.sequencer;
      expect(Sequencer.name).toBe(LongestFirstSequencer.name);
      const specs = await vitest.globTestSpecifications();
      const e2e = specs.filter((s) => s.project.name === "e2e");
      const sorted = await new Sequencer(vitest).sort([...e2e]);
      const names = (list: typeof specs) => list.map((s) => relative(REPO, s.moduleId));
      expect([...names(sorted)].sort()).toEqual([...names(e2e)].sort());
      // Every named file exists in some project (a renamed one would lose its place unseen).
      for (const file of LONGEST_FIRST) expect(names(specs), file).toContain(file);
      const leading = names(sorted).slice(0, LONGEST_FIRST.filter((f) => names(e2e).includes(f)).length);
      expect(leading).toEqual(LONGEST_FIRST.filter((f) => names(e2e).includes(f)));
    } finally {
      await vitest.close();
    }
  });
});
