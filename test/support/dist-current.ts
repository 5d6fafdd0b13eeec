// vitest global set-up: the compiled CLI (dist/) the tests spawn is current with the checkout's source.
// Invariant: before any test runs, every src/ and harnesses/ TypeScript file has an emitted .js in dist/
// no older than itself, and the bundle the bin and the package's exports run (dist/bundle/, made from
// those .js files by scripts/bundle.mjs) is no older than any of them; otherwise the two steps of
// `npm run build` that make them (`tsc -p tsconfig.build.json`, then the bundle) run once here. A fresh
// `npm ci` has built both already, so CI pays nothing. Runs started side by side (`npm test` starts the
// projects as separate vitest processes) build one at a time: a build holds a lock directory, and a run
// that finds it held waits, then looks again at what is stale — so no two builds write dist/ at once.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
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

/** When scripts/bundle.mjs last wrote dist/bundle/ (its metafile is written last), -1 if never. */
const bundledAt = (): number => mtimeMs(join(REPO, "dist/bundle-meta.json"));

/** Whether a compiled module (or package.json, whose exports name the entries) is newer than the bundle. */
export function staleBundle(): boolean {
  const at = bundledAt();
  if (at < mtimeMs(join(REPO, "package.json"))) return true;
  for (const root of ROOTS)
    for (const src of sources(join(REPO, root))) {
      const out = join(REPO, "dist", relative(REPO, src)).replace(/\.ts$/, ".js");
      if (mtimeMs(out) > at) return true;
    }
  return false;
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

/** The lock a build holds (under node_modules/.cache, which no package step cleans while tests run). */
const LOCK = join(REPO, "node_modules/.cache/harnesshost/dist-build.lock");
/** How long a run waits for another run's build (ms): a cold `tsc` plus the bundle on a busy machine. */
const LOCK_WAIT_MS = 10 * 60_000;

/** Whether the process that wrote the lock's owner file is gone (a build that died leaves its lock). */
function ownerGone(lock: string): boolean {
  try {
    process.kill(Number(readFileSync(join(lock, "pid"), "utf8")), 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "EPERM";
  }
}

/**
 * Runs `build` holding the lock directory `lock`; waits (polling, up to `waitMs`) while another live
 * run holds it, and takes over a lock whose owner is gone (test/scripts/dist-build-lock.test.ts).
 */
export function whileLocked(build: () => void, lock = LOCK, waitMs = LOCK_WAIT_MS): void {
  mkdirSync(join(lock, ".."), { recursive: true });
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    // A lock whose owner file is not written yet is young: only a lock with a dead owner is taken over.
    if (ownerGone(lock) && statSync(lock).mtimeMs < Date.now() - 5_000) rmSync(lock, { recursive: true, force: true });
    else if (Date.now() > deadline) throw new Error(`dist/ build lock ${lock} held for over ${waitMs} ms`);
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  }
  try {
    writeFileSync(join(lock, "pid"), String(process.pid));
    build();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function buildWhatIsStale(): void {
  const stale = staleSource();
  if (stale !== undefined) {
    process.stdout.write(`dist/ is older than ${stale}: building the CLI (tsc -p tsconfig.build.json)\n`);
    execFileSync(process.execPath, [join(REPO, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
      cwd: REPO,
      stdio: "inherit",
    });
  }
  if (!staleBundle()) return;
  process.stdout.write("dist/bundle/ is older than dist/src: bundling (node scripts/bundle.mjs)\n");
  execFileSync(process.execPath, [join(REPO, "scripts/bundle.mjs")], { cwd: REPO, stdio: "inherit" });
}

export default function setup(): void {
  if (staleSource() === undefined && !staleBundle()) return;
  whileLocked(buildWhatIsStale);
}
