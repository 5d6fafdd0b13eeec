// vitest global set-up: the content hash of the tree that ships, taken once when the run starts and
// given to every test file (`inject("packTreeHash")`), so all of them share one packed tarball even if
// a file is edited while the run goes on (test/package/shared.ts).
import type { TestProject } from "vitest/node";
import { treeHash } from "./shared.js";

declare module "vitest" {
  export interface ProvidedContext {
    packTreeHash: string;
  }
}

export default function setup(project: TestProject): void {
  project.provide("packTreeHash", treeHash());
}
