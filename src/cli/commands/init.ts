// `harnesshost init DIR`: writes a runnable project (docs/testing.md, "A new project"). Invariants: it
// writes only into a directory that does not exist or is empty — an existing file is never
// overwritten (ALREADY_EXISTS, nothing written); the project pins the harnesshost that ran it and the
// zod, TypeScript and Node types it was built with; it needs no network.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { ErrorCode, HostError } from "../../errors/index.js";
import { PACKAGE_ROOT } from "../../paths.js";
import { type Command, UsageError } from "../command.js";
import { type ScaffoldVersions, scaffoldFiles } from "../scaffold/files.js";

/** The versions a new project pins, from this package's own package.json. */
export function scaffoldVersions(): ScaffoldVersions {
  const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as {
    version: string;
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  return {
    harnesshost: pkg.version,
    zod: pkg.dependencies?.["zod"] ?? "^4",
    typescript: pkg.devDependencies?.["typescript"] ?? "^5.9",
    nodeTypes: pkg.devDependencies?.["@types/node"] ?? "^20",
  };
}

/** An npm package name from a directory name: lower case, runs of other characters as `-`. */
export function projectName(dir: string): string {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[._-]+|-+$/g, "");
  return name === "" ? "harness-project" : name.slice(0, 214);
}

export const initCommand: Command = {
  name: "init",
  usage: "init DIR",
  options: {},
  async run(ctx) {
    const [dir, ...extra] = ctx.positionals;
    if (dir === undefined || dir === "") throw new UsageError("init needs the new project's directory: init my-agent");
    if (extra.length > 0) throw new UsageError(`init takes one directory, got ${ctx.positionals.length}`);
    const root = resolve(dir);
    if (existsSync(root) && readdirSync(root).length > 0)
      throw new HostError(
        ErrorCode.AlreadyExists,
        `${dir} already exists and is not empty; init writes only into a new or empty directory`,
      );
    const versions = scaffoldVersions();
    const files = scaffoldFiles(projectName(dir), versions);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text, { flag: "wx" });
    }
    const shown = relative(process.cwd(), root) || ".";
    ctx.out(`created ${shown} with harnesshost ${versions.harnesshost}: ${Object.keys(files).join(", ")}`);
    ctx.out("next:");
    if (shown !== ".") ctx.out(`  cd ${/^[\w./-]+$/.test(shown) ? shown : JSON.stringify(shown)}`);
    ctx.out("  npm install");
    ctx.out("  npm test");
    return 0;
  },
};
