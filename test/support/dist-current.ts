// vitest global set-up: the compiled CLI (dist/) the tests spawn is current with the checkout's source.
// Invariant: before any test runs, every src/ and harnesses/ TypeScript file has an emitted .js in dist/
// no older than itself; otherwise the build (`tsc -p tsconfig.build.json`, what `npm run build` runs
// for the CLI) runs once here. A fresh `npm ci` has built it already, so CI pays nothing.
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const REPO = resolve(import.meta.dirname, "../..");
const ROOTS = ["src", "harnesses"];
const EXCLUDED = [join("harnesses", "fixtures")];

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (EXCLUDED.includes(relative(REPO, path))) continue;
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) yield path;
  }
}

function mtimeMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
}

/** The first source file whose compiled output is missing or older than it, if any. */
export function staleSource(): string | undefined {
  for (const root of ROOTS) {
    for (const src of sources(join(REPO, root))) {
      const out = join(REPO, "dist", relative(REPO, src)).replace(/\.ts$/, ".js");
      if (mtimeMs(out) < mtimeMs(src)) return relative(REPO, src);
    }
  }
  return undefined;
}

export default function setup(): void {
  const stale = staleSource();
  if (stale === undefined) return;
  process.stdout.write(`dist/ is older than ${stale}: building the CLI (tsc -p tsconfig.build.json)\n`);
  execFileSync(process.execPath, [join(REPO, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
    cwd: REPO,
    stdio: "inherit",
  });
}
