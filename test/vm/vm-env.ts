// What the vm tests need from the machine, and the image builds they share. Invariants: a vm test
// runs only where QEMU, the Debian cloud kernel, busybox, zstd and Python grpcio are present, and
// otherwise skips with the missing piece printed (scripts/ensure-test-deps.mjs installs them with
// apt-get wherever it can, so a skip means they could not be installed); every vm test file of one
// run shares one image cache (test/vm/image-cache.ts), so each kind of image is built once per run,
// by one file at a time (a lock in that cache), and the rest copy it — what each file boots (base
// snapshots) stays in the file's own cache root.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, inject } from "vitest";
import { repeatedDraws } from "../../src/conformance/checks/memory.js";
import { type BuildResult, buildImage } from "../../src/vm/image-build.js";
import { eventually } from "../fixtures/eventually.js";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const COUNTER_NODE = join(ROOT, "harnesses/python/counter_node.py");
export const HHSDK = join(ROOT, "harnesses/python/hhsdk");
export const NODE_COUNTER = join(ROOT, "harnesses/node/counter_node.mjs");

function missing(): string[] {
  const out: string[] = [];
  const ok = (cmd: string, args: string[]) => spawnSync(cmd, args, { encoding: "utf8" }).status === 0;
  if (!ok("qemu-system-x86_64", ["--version"])) out.push("qemu-system-x86 (qemu-system-x86_64)");
  const kernels = existsSync("/boot") ? readdirSync("/boot").filter((n) => /^vmlinuz-.*-cloud-amd64$/.test(n)) : [];
  if (kernels.length === 0) out.push("linux-image-cloud-amd64 (/boot/vmlinuz-*-cloud-amd64)");
  if (!existsSync("/bin/busybox")) out.push("busybox-static (/bin/busybox)");
  if (!ok("zstd", ["--version"])) out.push("zstd");
  if (!ok("/usr/bin/python3", ["-c", "import grpc, google.protobuf"])) out.push("python3-grpcio python3-protobuf");
  return out;
}

/** Why the vm tests cannot run here, or undefined when they can. Printed by every vm test file. */
export function vmSkipReason(): string | undefined {
  const m = missing();
  if (m.length === 0) return undefined;
  const reason = `vm tests skipped: missing ${m.join(", ")} (install with apt-get; see scripts/ensure-test-deps.mjs)`;
  console.warn(reason);
  return reason;
}

/** The run's shared image cache (test/vm/image-cache.ts), or undefined outside the e2e project. */
function sharedImageCache(): string | undefined {
  const dir = inject("vmImageCache");
  return typeof dir === "string" && dir !== "" ? dir : undefined;
}

/**
 * A fresh cache root for this test file: base snapshots land in it, not in ~/.cache; its image cache
 * (harnesshost/images, where `image build` looks) is the run's shared one.
 */
export function isolateCaches(): string {
  const dir = mkdtempSync(join(tmpdir(), "hh-vmtest-cache-"));
  process.env.XDG_CACHE_HOME = dir;
  const shared = sharedImageCache();
  if (shared !== undefined) {
    mkdirSync(join(dir, "harnesshost"), { recursive: true });
    symlinkSync(shared, join(dir, "harnesshost/images"), "dir");
  }
  return dir;
}

/** Runs `build` holding the shared image cache's lock, so one image is never built twice at once. */
export async function withImageCacheLock<T>(build: () => Promise<T>): Promise<T> {
  const shared = sharedImageCache();
  if (shared === undefined) return build();
  const lock = join(shared, ".build-lock");
  const take = (): boolean => {
    try {
      mkdirSync(lock);
      return true;
    } catch {
      return false;
    }
  };
  await eventually("the shared vm image cache's build lock", take, 900_000);
  try {
    return await build();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The reference counter image, built into `dir` (or copied from the run's cache); extra ARGS go to the program. */
export function buildCounterImage(dir: string, name: string, args: readonly string[] = []): Promise<BuildResult> {
  return withImageCacheLock(() => buildImage({ python: COUNTER_NODE, includes: [HHSDK], args, out: join(dir, name) }));
}

/** The reference Node counter image (`image build --node`), built into `dir` (or copied from the run's cache). */
export function buildNodeCounterImage(dir: string, name: string): Promise<BuildResult> {
  return withImageCacheLock(() => buildImage({ node: NODE_COUNTER, includes: [], args: [], out: join(dir, name) }));
}

/** A cache of the file's own, for a `noCache` rebuild: it writes its result there, never into the shared one. */
export function privateImageCache(cacheRoot: string): string {
  return join(cacheRoot, "private-images");
}

/**
 * Asks each of two fork children the randomness probe (the counters answer `random:NAME=VALUE …`, one
 * draw per generator) and fails naming every generator whose draw is the same in both; returns the answers.
 */
export async function expectChildrenDrawApart(
  draw: (child: string) => Promise<readonly string[]>,
  children: readonly [string, string],
  names: readonly string[],
): Promise<readonly [string, string]> {
  const [a = "", b = ""] = await Promise.all(children.map(async (c) => (await draw(c)).join("")));
  for (const answer of [a, b])
    expect(
      answer
        .slice("random:".length)
        .split(" ")
        .map((w) => w.split("=")[0]),
    ).toEqual(names);
  expect(repeatedDraws(a, b), `${a}\n${b}`).toEqual([]);
  return [a, b];
}
