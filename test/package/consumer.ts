// An empty project with the packed tarball installed, the way a user's project gets it — offline:
// the project's lockfile pins harnesshost to the tarball and its dependency closure to exactly what
// this repository's package-lock.json pins, so `npm ci --offline` takes every package from the npm
// cache that the repository's own `npm ci` filled. Install scripts are skipped and better-sqlite3's
// native addon (built by that same `npm ci`, same version and platform) is copied in: offline, its
// installer can only compile from source, which takes minutes.
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { REPO, run } from "./packed.js";

interface LockEntry {
  readonly dev?: boolean;
  readonly devOptional?: boolean;
  readonly link?: boolean;
  readonly [k: string]: unknown;
}

/** The lockfile entries `names` need: each package and, transitively, what it depends on (nested first). */
function closure(names: readonly string[], packages: Record<string, LockEntry>): string[] {
  const seen = new Set<string>();
  const visit = (name: string, from: string): void => {
    let base = from;
    for (;;) {
      const path = `${base === "" ? "" : `${base}/`}node_modules/${name}`;
      if (packages[path] !== undefined) {
        if (seen.has(path)) return;
        seen.add(path);
        const entry = packages[path] as { dependencies?: object; optionalDependencies?: object };
        for (const dep of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) visit(dep, path);
        return;
      }
      if (base === "") return; // an optional dependency not locked for any platform
      base = base.includes("/node_modules/") ? base.slice(0, base.lastIndexOf("/node_modules/")) : "";
    }
  };
  for (const name of names) visit(name, "");
  return [...seen];
}

/**
 * Installs the tarball into `dir` (created if needed), and with it `devDependencies` — names of this
 * repository's dev dependencies (e.g. "tsx", which the authoring guide tells authors to add), at the
 * versions its lockfile pins.
 */
export async function installConsumer(
  tarball: string,
  dir: string,
  devDependencies: readonly string[] = [],
): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as Record<string, unknown>;
  const lock = JSON.parse(readFileSync(join(REPO, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  const spec = `file:${relative(dir, tarball)}`;
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  const packages: Record<string, unknown> = {
    "": { name: "consumer", dependencies: { harnesshost: spec } },
    "node_modules/harnesshost": {
      version: pkg["version"],
      resolved: spec,
      integrity,
      license: pkg["license"],
      dependencies: pkg["dependencies"],
      bin: pkg["bin"],
      engines: pkg["engines"],
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === "" || entry.dev === true || entry.devOptional === true || entry.link === true) continue;
    packages[path] = entry;
  }
  for (const path of closure(devDependencies, lock.packages)) packages[path] ??= lock.packages[path];
  const dev = Object.fromEntries(
    devDependencies.map((name) => [name, String(lock.packages[`node_modules/${name}`]?.["version"] ?? "*")]),
  );
  const root = { dependencies: { harnesshost: spec }, ...(devDependencies.length > 0 ? { devDependencies: dev } : {}) };
  packages[""] = { name: "consumer", ...root };
  const manifest = { name: "consumer", private: true, type: "module", ...root };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(
    join(dir, "package-lock.json"),
    `${JSON.stringify({ name: "consumer", lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
  await run("npm", ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: dir });
  cpSync(join(REPO, "node_modules/better-sqlite3/build"), join(dir, "node_modules/better-sqlite3/build"), {
    recursive: true,
  });
}
