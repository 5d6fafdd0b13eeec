// What the vm tests need from the machine, and the one image build they share. Invariant: a vm test
// runs only where QEMU, the Debian cloud kernel, busybox, zstd and Python grpcio are present, and
// otherwise skips with the missing piece printed (scripts/ensure-test-deps.mjs installs them with
// apt-get wherever it can, so a skip means they could not be installed).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildResult, buildImage } from "../../src/vm/image-build.js";

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

/** A fresh cache root for this test file: image cache and base snapshots land in it, not in ~/.cache. */
export function isolateCaches(): string {
  const dir = mkdtempSync(join(tmpdir(), "hh-vmtest-cache-"));
  process.env.XDG_CACHE_HOME = dir;
  return dir;
}

/** The reference counter image, built into `dir`; extra ARGS go to the program. */
export function buildCounterImage(dir: string, name: string, args: readonly string[] = []): Promise<BuildResult> {
  return buildImage({ python: COUNTER_NODE, includes: [HHSDK], args, out: join(dir, name) });
}

/** The reference Node counter image (`image build --node`), built into `dir`. */
export function buildNodeCounterImage(dir: string, name: string): Promise<BuildResult> {
  return buildImage({ node: NODE_COUNTER, includes: [], args: [], out: join(dir, name) });
}
