// Global set-up of the e2e project: one vm image cache for the whole run (test/vm/vm-env.ts links
// every vm test file's image cache to it). Invariant: it is an empty directory of its own when the run
// starts and is removed when the run ends; nothing is built here, so a run without vm files pays
// nothing.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    vmImageCache: string;
  }
}

export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), "hh-vm-images-"));
  project.provide("vmImageCache", dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
