// Runs in an installed consumer project what a user runs there: a command (never throwing on exit ≠ 0),
// and the strictest TypeScript a consumer might use (exactOptionalPropertyTypes, noUncheckedIndexedAccess,
// skipLibCheck false) under both NodeNext and Bundler resolution; and which of the package's checks run
// on the floor Node only.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "vitest";
import { REPO, run } from "./packed.js";

/**
 * Set by scripts/test-other-nodes.mjs to the version of the other Node release it runs test/package/
 * on. A check whose verdict cannot depend on the Node that runs it — tsc over the shipped declarations,
 * publint and attw reading the tarball, the tarball's file list — runs on the floor only
 * (docs/packaging.md, "Node.js versions"); what can differ by Node (imports from plain Node, the bin,
 * `npx harnesshost`, the examples against `serve`) runs on every Node.
 */
export const OTHER_NODE = process.env.HARNESSHOST_OTHER_NODE;
/** `it`, skipped on another Node than the floor (see OTHER_NODE). */
export const itOnTheFloor = it.skipIf(OTHER_NODE !== undefined);
/** `describe`, skipped on another Node than the floor (see OTHER_NODE). */
export const describeOnTheFloor = describe.skipIf(OTHER_NODE !== undefined);

const TSC = join(REPO, "node_modules/typescript/bin/tsc");

/** Runs a command in `dir`: its exit code and output. */
export async function inDir(
  dir: string,
  cmd: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(cmd, args, { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

const OPTIONS = {
  target: "ES2022",
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  skipLibCheck: false,
  noEmit: true,
  types: ["node"],
  typeRoots: [join(REPO, "node_modules/@types")],
};

/** Type-checks `include` (globs in `dir`) under NodeNext and Bundler; each config's name, exit code and output. */
export async function strictTsc(
  dir: string,
  prefix: string,
  include: string[],
): Promise<{ name: string; code: number; output: string }[]> {
  const out: { name: string; code: number; output: string }[] = [];
  for (const [name, resolution] of [
    [`tsconfig.${prefix}nodenext.json`, { module: "NodeNext", moduleResolution: "NodeNext" }],
    [`tsconfig.${prefix}bundler.json`, { module: "ESNext", moduleResolution: "Bundler" }],
  ] as const) {
    writeFileSync(
      join(dir, name),
      JSON.stringify({ compilerOptions: { ...OPTIONS, ...resolution }, include }, null, 2),
    );
    const res = await inDir(dir, process.execPath, [TSC, "-p", name]);
    out.push({ name, code: res.code, output: `${res.stdout}${res.stderr}` });
  }
  return out;
}
