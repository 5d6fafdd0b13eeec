// The base snapshot of an image: a guest booted until its harness answered Describe, paused and
// written to a file, never having served a turn. Every fresh actor is a restore of it (a restore is
// ~10× faster than a boot on software emulation). Invariants: the file is keyed by image digest,
// accelerator and QEMU version (a snapshot only restores into the same machine), it appears only
// once complete (written beside, then renamed), the booted guest is stopped afterwards, and a boot
// that fails is tried once more before the failure is reported.
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { type HarnessDescriptor, HarnessDescriptorSchema } from "../gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { RemoteHarness } from "../node/remote-harness.js";
import { type AccelChoice, QEMU } from "./accel.js";
import { defaultCacheDir } from "./image-build.js";
import type { Image } from "./image-manifest.js";
import { DEFAULT_DEADLINES, type VmDeadlines, VmProcess } from "./qemu.js";

export interface BaseSnapshot {
  /** The zstd-compressed migration stream. */
  readonly file: string;
  readonly descriptor: HarnessDescriptor;
  /** True when this call booted the guest (false: an earlier process's file was reused). */
  readonly booted: boolean;
}

export interface BaseOptions {
  readonly dir?: string;
  readonly deadlines?: VmDeadlines;
}

function qemuVersion(): string {
  return (spawnSync(QEMU, ["--version"], { encoding: "utf8" }).stdout ?? "").split("\n")[0] ?? "";
}

export function defaultBaseDir(): string {
  return join(dirname(defaultCacheDir()), "vm-base");
}

/**
 * A cold boot, tried a second time when the first fails: a guest's early boot under software
 * emulation on a busy host can trip a timing check and panic; a second failure is reported with both.
 */
async function bootOnceMore(image: Image, accel: AccelChoice, deadlines: VmDeadlines): Promise<VmProcess> {
  try {
    return await VmProcess.start(image, accel, { kind: "boot" }, deadlines);
  } catch (first) {
    try {
      return await VmProcess.start(image, accel, { kind: "boot" }, deadlines);
    } catch (second) {
      const text = (e: unknown) => (e instanceof Error ? e.message : String(e));
      throw new HostError(
        ErrorCode.Unavailable,
        `vm image failed to boot twice:\n${text(first)}\n---\n${text(second)}`,
        {
          cause: second,
        },
      );
    }
  }
}

export async function baseSnapshot(image: Image, accel: AccelChoice, opts: BaseOptions = {}): Promise<BaseSnapshot> {
  const dir = opts.dir ?? defaultBaseDir();
  const key = createHash("sha256")
    .update(JSON.stringify([image.manifest.digest, accel.accel, qemuVersion()]))
    .digest("hex");
  const file = join(dir, `${key}.zst`);
  const descriptorFile = join(dir, `${key}.descriptor.binpb`);
  if (existsSync(file) && existsSync(descriptorFile))
    return { file, descriptor: fromBinary(HarnessDescriptorSchema, readFileSync(descriptorFile)), booted: false };
  mkdirSync(dir, { recursive: true });
  const vm = await bootOnceMore(image, accel, opts.deadlines ?? DEFAULT_DEADLINES);
  try {
    const probe = new RemoteHarness({ address: vm.address, session: "" });
    let descriptor: HarnessDescriptor;
    try {
      descriptor = await probe.describe();
    } finally {
      probe.close();
    }
    const tmp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    await vm.snapshotTo(tmp, opts.deadlines ?? DEFAULT_DEADLINES);
    writeFileSync(`${descriptorFile}.tmp`, toBinary(HarnessDescriptorSchema, descriptor));
    renameSync(`${descriptorFile}.tmp`, descriptorFile);
    renameSync(tmp, file);
    return { file, descriptor, booted: true };
  } finally {
    await vm.stop();
    for (const f of [`${descriptorFile}.tmp`]) rmSync(f, { force: true });
  }
}
