// Scratch directories for figures. Invariant: every directory handed out is removed by its `dispose`,
// which figures call in `finally`, so an aborted figure leaves nothing behind.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface ScratchDir {
  readonly path: string;
  file(name: string): string;
  dispose(): void;
}

/**
 * `memory`: on tmpfs (/dev/shm) when the machine has one — for figures that only *build* data with
 * durable writes and then measure reads, where the fsyncs would cost minutes and measure nothing.
 */
export function scratchDir(label: string, where: "disk" | "memory" = "disk"): ScratchDir {
  const base = where === "memory" && existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  const path = mkdtempSync(join(base, `harnesshost-bench-${label}-`));
  return {
    path,
    file: (name) => join(path, name),
    dispose: () => rmSync(path, { recursive: true, force: true }),
  };
}
