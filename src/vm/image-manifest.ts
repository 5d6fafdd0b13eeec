// The on-disk form of a vm harness image: a directory holding `manifest.json`, the guest kernel and
// its initramfs. Invariant: an image is only used after its manifest passed this schema and both
// files hash to the digests it records (so a truncated or edited image is refused, never booted).
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { z } from "zod";
import { ErrorCode, HostError } from "../errors/index.js";
import { MANIFEST } from "./manifest-name.js";

export const IMAGE_FORMAT = "harnesshost-vm-image/1";
export { MANIFEST } from "./manifest-name.js";
/** The guest TCP port the harness node listens on (also given to it as HARNESS_PORT). */
export const GUEST_PORT = 50051;

const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

export const ImageManifest = z.object({
  format: z.literal(IMAGE_FORMAT),
  /** sha256 of the image's identity (kernel, initrd, command line, memory): the image's name. */
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  kernel: z.object({ file: z.literal("kernel"), sha256: Sha256Hex, release: z.string().min(1) }),
  initrd: z.object({ file: z.literal("initrd.cpio.gz"), sha256: Sha256Hex, bytes: z.number().int().positive() }),
  cmdline: z.string().min(1),
  memoryMb: z.number().int().min(64).max(4096),
  guestPort: z.literal(GUEST_PORT),
  /** What the guest runs, for diagnostics: `python3 FILE ARGS…` or `node FILE ARGS…`. */
  program: z.object({ language: z.enum(["python", "node"]), file: z.string().min(1), args: z.array(z.string()) }),
  /** sha256 of the build inputs; the build cache's key. */
  inputs: Sha256Hex,
});
export type ImageManifest = z.infer<typeof ImageManifest>;

/** The digest an image's identity fields hash to. */
export function imageDigest(m: Pick<ImageManifest, "kernel" | "initrd" | "cmdline" | "memoryMb">): string {
  const identity = JSON.stringify([m.kernel.sha256, m.initrd.sha256, m.cmdline, m.memoryMb]);
  return `sha256:${createHash("sha256").update(identity).digest("hex")}`;
}

export interface Image {
  readonly dir: string;
  readonly manifest: ImageManifest;
  readonly kernelPath: string;
  readonly initrdPath: string;
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Opens and verifies an image directory; InvalidArgument when it is not one, DataLoss when corrupt. */
export async function openImage(path: string): Promise<Image> {
  const dir = resolve(path);
  let raw: string;
  try {
    raw = await readFile(join(dir, MANIFEST), "utf8");
  } catch (err) {
    throw new HostError(ErrorCode.InvalidArgument, `${path} is not a vm image (no ${MANIFEST})`, { cause: err });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new HostError(ErrorCode.InvalidArgument, `${path}/${MANIFEST} is not JSON`, { cause: err });
  }
  const result = ImageManifest.safeParse(parsed);
  if (!result.success)
    throw new HostError(ErrorCode.InvalidArgument, `${path}/${MANIFEST} is not a ${IMAGE_FORMAT} manifest`);
  const manifest = result.data;
  if (imageDigest(manifest) !== manifest.digest)
    throw new HostError(ErrorCode.DataLoss, `vm image ${path}: manifest digest does not match its contents`);
  const kernelPath = join(dir, manifest.kernel.file);
  const initrdPath = join(dir, manifest.initrd.file);
  for (const [file, want] of [
    [kernelPath, manifest.kernel.sha256],
    [initrdPath, manifest.initrd.sha256],
  ] as const) {
    const got = sha256(await readFile(file).catch(() => new Uint8Array(0)));
    if (got !== want) throw new HostError(ErrorCode.DataLoss, `vm image ${path}: ${file} is missing or corrupt`);
  }
  return { dir, manifest, kernelPath, initrdPath };
}
