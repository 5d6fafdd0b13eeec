// Scratch directories for figures. Invariant: every directory handed out is removed by its `dispose`,
// which figures call in `finally`, so an aborted figure leaves nothing behind.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface ScratchDir {
  readonly path: string;
  file(name: string): string;
  dispose(): void;
}

export function scratchDir(label: string): ScratchDir {
  const path = mkdtempSync(join(tmpdir(), `harnesshost-bench-${label}-`));
  return {
    path,
    file: (name) => join(path, name),
    dispose: () => rmSync(path, { recursive: true, force: true }),
  };
}
