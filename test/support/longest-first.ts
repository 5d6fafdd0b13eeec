// vitest's sequencer for every project: its own order (failed files first, then by cached duration,
// else by file size), except that the files test/projects.ts names in LONGEST_FIRST go first, in that
// order. Invariant: it only reorders — every file it is given comes back exactly once.
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { LONGEST_FIRST } from "../projects.js";

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const i = LONGEST_FIRST.indexOf(relative(this.ctx.config.root, spec.moduleId).replaceAll("\\", "/"));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    // Array.prototype.sort is stable: files not named keep vitest's order.
    return [...ordered].sort((a, b) => rank(a) - rank(b));
  }
}
