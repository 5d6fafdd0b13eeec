// One packed tarball and one project with it installed, shared by every test file that runs the package
// as users do (`npx harnesshost …` in a project that installed it). Invariant: for one content of the
// tree that ships (everything git sees outside test/ and bench/), `npm pack` and the offline install run
// once — across test files, forked workers and vitest runs — and every caller gets the same tarball and
// the same installed project; a changed tree gets a fresh pair. Concurrent callers wait on one packer
// (a lock directory naming its pid; a dead packer's lock is taken over), never pack twice at once.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { eventually } from "../fixtures/eventually.js";
import { installConsumer } from "./consumer.js";
import { type Packed, packRepo, REPO } from "./packed.js";

/** Where packed trees of this checkout live: one folder per content hash. */
const CACHE = join(tmpdir(), `harnesshost-packed-${createHash("sha256").update(REPO).digest("hex").slice(0, 12)}`);

/** A hash of every file that can reach the tarball (git's view: tracked and untracked, not ignored). */
export function treeHash(): string {
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: REPO,
    encoding: "utf8",
    maxBuffer: 64 << 20,
  })
    .split("\0")
    .filter((f) => f !== "" && !/^(test|bench)\//.test(f))
    .sort();
  const hash = createHash("sha256");
  for (const file of files) {
    hash.update(file).update("\0");
    if (existsSync(join(REPO, file))) hash.update(readFileSync(join(REPO, file)));
    hash.update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

/** The packed tarball and the installed project for this tree. */
export interface SharedPackage extends Packed {
  /** A project (package.json, lockfile, node_modules) with the tarball and tsx installed; never write in it. */
  readonly project: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

let mine: Promise<SharedPackage> | undefined;

/** Packs and installs once for this tree's content; later calls (any file, any worker) reuse it. */
export function sharedPackage(): Promise<SharedPackage> {
  mine ??= build();
  return mine;
}

async function build(): Promise<SharedPackage> {
  // The run's hash (tree-hash-setup.ts), so every file and worker agrees; computed here outside vitest.
  let key: string;
  try {
    key = inject("packTreeHash") ?? treeHash();
  } catch {
    key = treeHash();
  }
  const done = join(CACHE, key);
  const meta = join(done, "packed.json");
  const lock = join(CACHE, `${key}.lock`);
  mkdirSync(CACHE, { recursive: true });
  for (;;) {
    if (existsSync(meta)) return JSON.parse(readFileSync(meta, "utf8")) as SharedPackage;
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, "pid"), String(process.pid));
      break;
    } catch {
      // Someone else packs: wait for them to finish, or to die (then take over).
      await eventually(
        "another test process to pack the tree",
        () => {
          if (existsSync(meta)) return true;
          let pid = 0;
          try {
            pid = Number(readFileSync(join(lock, "pid"), "utf8"));
          } catch {
            // not written yet, or the lock is gone
          }
          if (pid > 0 && !alive(pid)) rmSync(lock, { recursive: true, force: true });
          return !existsSync(lock);
        },
        600_000,
      );
    }
  }
  try {
    const packed = await packRepo();
    const project = join(packed.dir, "project");
    // tsx, typescript and @types/node too: docs/harness-authoring.md §0 has authors add them.
    await installConsumer(packed.tarball, project, ["tsx", "typescript", "@types/node"]);
    // Older trees of this checkout are dropped (each holds an installed node_modules) once no run can
    // still be using them: a run takes its tree when it starts, so an hour-old one is long done.
    for (const old of readdirSync(CACHE)) {
      const path = join(CACHE, old);
      if (old !== key && !old.endsWith(".lock") && Date.now() - statSync(path).mtimeMs > 3_600_000)
        rmSync(path, { recursive: true, force: true });
    }
    const shared: SharedPackage = {
      ...packed,
      dir: done,
      tarball: join(done, packed.tarball.slice(packed.dir.length + 1)),
      project: join(done, "project"),
    };
    writeFileSync(join(packed.dir, "packed.json"), JSON.stringify(shared));
    renameSync(packed.dir, done);
    return shared;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * A fresh project folder of its own, as a user's project root is: the shared project's package.json
 * and a link to its node_modules, so `npx harnesshost` runs the installed package and the paths the
 * docs give (`./node_modules/harnesshost/docs/examples/…`) resolve from it. Short (under the system
 * temp folder): unix sockets live in it.
 */
export async function projectWorkdir(prefix: string): Promise<string> {
  const { project } = await sharedPackage();
  const dir = mkdtempSync(join(tmpdir(), `hh-${prefix}-`));
  copyFileSync(join(project, "package.json"), join(dir, "package.json"));
  symlinkSync(join(project, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

/** A consumer project of a test file's own: the shared tarball installed offline into a fresh temp folder. */
export interface OwnConsumer {
  readonly packed: SharedPackage;
  readonly project: string;
}

/**
 * Installs the shared tarball (packed once per tree) into a new folder under the system temp folder,
 * with `devDependencies` taken from this repository's node_modules (installConsumer); the caller
 * removes `project` when done. For tests that must change their project (peers, a scaffold).
 */
export async function ownConsumer(prefix: string, devDependencies: readonly string[] = []): Promise<OwnConsumer> {
  const packed = await sharedPackage();
  const project = mkdtempSync(join(tmpdir(), `hh-${prefix}-`));
  await installConsumer(packed.tarball, project, devDependencies);
  return { packed, project };
}
