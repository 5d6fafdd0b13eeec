// The build digest of a harness module (docs/versioning.md, build digests). Invariant: a module's digest
// is "sha256:<hex>" of its entry file's bytes as read when the harness is loaded, a built-in harness has
// none (""), and nothing else (imports of the entry file, node_modules) is hashed — bundle a harness into
// one file for its digest to cover all of its code.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { builtinHarnesses } from "../../harnesses/index.js";

/** "sha256:<hex>" of a file's bytes. */
export function fileDigest(path: string): string {
  return `sha256:${createHash("sha256").update(readFileSync(path)).digest("hex")}`;
}

/** The digest of the harness a runtime target names: its entry file's, or "" for a built-in. */
export function moduleDigest(target: string): string {
  if (Object.hasOwn(builtinHarnesses, target)) return "";
  try {
    return fileDigest(resolve(target));
  } catch {
    return "";
  }
}
