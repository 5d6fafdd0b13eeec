// The `harnesshost` command tests run as a child process: the published entry, bin/harnesshost.js, over
// the compiled dist/ — what `npx harnesshost` runs in a checkout and in an installed package. Invariant:
// dist/ is never older than src/ when a test runs it, because test/support/dist-current.ts (vitest's
// global set-up) rebuilds it first when any source file is newer than its output.
import { resolve } from "node:path";

export const REPO = resolve(import.meta.dirname, "../..");
export const CLI_ENTRY = resolve(REPO, "bin/harnesshost.js");
