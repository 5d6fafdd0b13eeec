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

export async function installConsumer(tarball: string, dir: string): Promise<void> {
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
  const manifest = { name: "consumer", private: true, type: "module", dependencies: { harnesshost: spec } };
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
