// What the files of dist/bundle/ hold, for tests that trace which modules a process loaded: the bundle
// (scripts/bundle.mjs) writes dist/bundle-meta.json, naming the compiled modules (dist/src/…) and
// package files (node_modules/…) each output file was made of. Invariant: `unbundled` answers a trace as
// if nothing were bundled — every loaded output file of dist/bundle/ stands for all it holds, under the
// same root it was loaded from — so a test's "was X loaded" reads the same for the bundled bin, the
// bundled exports and the unbundled tree.
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { REPO } from "./cli-entry.js";

interface BundleMeta {
  readonly outputs: Readonly<Record<string, readonly string[]>>;
}

let meta: Map<string, readonly string[]> | undefined;

/** Output file name (dist/bundle/NAME) → the files it holds, relative to the package root. */
function outputs(): Map<string, readonly string[]> {
  meta ??= new Map(
    Object.entries((JSON.parse(readFileSync(join(REPO, "dist/bundle-meta.json"), "utf8")) as BundleMeta).outputs).map(
      ([file, inputs]) => [basename(file), inputs],
    ),
  );
  return meta;
}

/** The loaded paths (or file: URLs) with each output file of a dist/bundle/ replaced by what it holds. */
export function unbundled(loaded: readonly string[]): string[] {
  const out: string[] = [];
  for (const path of loaded) {
    const at = path.lastIndexOf("/dist/bundle/");
    const inputs = at < 0 ? undefined : outputs().get(path.slice(at + "/dist/bundle/".length));
    if (inputs === undefined) out.push(path);
    else for (const input of inputs) out.push(`${path.slice(0, at)}/${input}`);
  }
  return out;
}
