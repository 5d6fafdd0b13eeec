// `harnesshost image build`: builds a vm harness image from a Python program or a Node ES module.
// Invariant: flags are checked before anything is built; the image directory appears only once complete.
import { buildImage } from "../../vm/image-build.js";
import { UsageError, int, json, requireStr, str, type Command } from "../command.js";

export const imageCommand: Command = {
  name: "image",
  usage:
    "image build (--python FILE | --node FILE) [--include DIR]... --out IMAGE [--memory-mb N] [--no-cache] [--json] [-- ARGS...]",
  options: {
    python: { type: "string" },
    node: { type: "string" },
    include: { type: "string", multiple: true },
    out: { type: "string" },
    "memory-mb": { type: "string" },
    "no-cache": { type: "boolean" },
    json: { type: "boolean" },
  },
  async run(ctx) {
    const [sub, ...args] = ctx.positionals;
    if (sub !== "build") throw new UsageError(`unknown image subcommand ${JSON.stringify(sub ?? "")}; expected build`);
    const includes = ctx.values["include"];
    const python = str(ctx.values, "python");
    const node = str(ctx.values, "node");
    if ((python === undefined) === (node === undefined))
      throw new UsageError("give exactly one of --python FILE and --node FILE");
    const memory = str(ctx.values, "memory-mb");
    const result = await buildImage({
      ...(python !== undefined ? { python } : {}),
      ...(node !== undefined ? { node } : {}),
      includes: Array.isArray(includes) ? includes : [],
      out: requireStr(ctx.values, "out"),
      args,
      // Default by language (image-build.ts DEFAULT_MEMORY_MB): 192 MiB for Python, 384 MiB for Node.
      ...(memory !== undefined ? { memoryMb: int(ctx.values, "memory-mb", 0, 64) } : {}),
      noCache: ctx.values["no-cache"] === true,
    });
    const m = result.manifest;
    if (json(ctx.values))
      ctx.out(
        JSON.stringify({ image: result.out, digest: m.digest, initrd_bytes: m.initrd.bytes, cached: result.cached }),
      );
    else
      ctx.out(
        `image ${result.out} ${m.digest} (initramfs ${(m.initrd.bytes / 1e6).toFixed(1)} MB, kernel ${m.kernel.release}${result.cached ? ", cached" : ""})`,
      );
    return 0;
  },
};
