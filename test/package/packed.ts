// Packs this checkout the way `npm publish` would (`npm pack`, which runs `prepare` and so builds dist/
// from the current source) into a temporary directory. Test files get the tarball through
// shared.ts's sharedPackage(), which calls this once per tree content for all of them.
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

export const REPO = resolve(import.meta.dirname, "../..");
export const run = promisify(execFile);

export interface Packed {
  readonly dir: string;
  readonly tarball: string;
  /** Paths inside the package, as `npm pack` lists them. */
  readonly files: readonly string[];
  readonly size: number;
  readonly version: string;
}

export async function packRepo(): Promise<Packed> {
  const dir = mkdtempSync(join(tmpdir(), "hh-pack-"));
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", dir], {
    cwd: REPO,
    maxBuffer: 64 * 1024 * 1024,
  });
  // npm prints the prepare script's output before the JSON document.
  const json = JSON.parse(stdout.slice(stdout.indexOf("[\n"))) as {
    filename: string;
    size: number;
    version: string;
    files: { path: string }[];
  }[];
  const info = json[0];
  if (!info) throw new Error(`npm pack printed no package: ${stdout}`);
  return {
    dir,
    tarball: join(dir, info.filename),
    files: info.files.map((f) => f.path),
    size: info.size,
    version: info.version,
  };
}
