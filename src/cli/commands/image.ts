// `harnesshost image build`: builds a vm harness image from a Python program. Invariant: flags are
// checked before anything is built; the image directory appears only once complete.
import { buildImage } from "../../vm/image-build.js";
import { UsageError, int, json, requireStr, type Command } from "../command.js";

export const imageCommand: Command = {
  name: "image",
  usage: "image build --python FILE [--include DIR]... --out IMAGE [--memory-mb N] [--no-cache] [--json] [-- ARGS...]",
  options: {
    python: { type: "string" },
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
    const result = await buildImage({
      python: requireStr(ctx.values, "python"),
      includes: Array.isArray(includes) ? includes : [],
      out: requireStr(ctx.values, "out"),
      args,
      memoryMb: int(ctx.values, "memory-mb", 192, 64),
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
