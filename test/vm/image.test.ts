// `harnesshost image build` (src/vm/image-build.ts): reproducible, cached by the digest of its
// inputs, verified when opened, and refusing bad input with a clear error and nothing written.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { buildImage } from "../../src/vm/image-build.js";
import { openImage } from "../../src/vm/image-manifest.js";
import { checkNodeListens } from "../../src/vm/image-node.js";
import { main } from "../../src/cli/main.js";
import {
  COUNTER_NODE,
  HHSDK,
  NODE_COUNTER,
  buildCounterImage,
  isolateCaches,
  privateImageCache,
  vmSkipReason,
  withImageCacheLock,
} from "./vm-env.js";

const skip = vmSkipReason();
let dir = "";
let cache = "";

beforeAll(() => {
  cache = isolateCaches();
  dir = mkdtempSync(join(tmpdir(), "hh-image-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(cache, { recursive: true, force: true });
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "resolved";
  } catch (err) {
    if (isHostError(err)) return `${err.code}: ${err.message}`;
    throw err;
  }
}

describe.skipIf(skip !== undefined)("vm image build", () => {
  it("image build is reproducible: a rebuild without the cache gives byte-identical files; a cached build copies them", async () => {
    // The first build may be a copy: the run's vm files share one image cache (vm-env.ts).
    const first = await buildCounterImage(dir, "a");
    const rebuilt = await buildImage({
      python: COUNTER_NODE,
      includes: [HHSDK],
      args: [],
      out: join(dir, "b"),
      noCache: true,
      cacheDir: privateImageCache(cache),
    });
    expect(rebuilt.cached).toBe(false);
    expect(rebuilt.manifest.digest).toBe(first.manifest.digest);
    for (const f of ["manifest.json", "kernel", "initrd.cpio.gz"])
      expect(readFileSync(join(dir, "b", f)).equals(readFileSync(join(dir, "a", f))), f).toBe(true);
    const again = await buildCounterImage(dir, "c");
    expect(again.cached).toBe(true);
    expect(again.manifest.digest).toBe(first.manifest.digest);
    const image = await openImage(join(dir, "c"));
    expect(image.manifest.program).toEqual({ language: "python", file: "counter_node.py", args: [] });
    // Program arguments are inputs: another digest.
    const liar = await buildCounterImage(dir, "d", ["--resumability", "STATELESS_REPLAY"]);
    expect(liar.manifest.digest).not.toBe(first.manifest.digest);
  }, 180_000);

  it("the CLI prints the image's digest and size", async () => {
    const out: string[] = [];
    const code = await withImageCacheLock(() =>
      main(["image", "build", "--python", COUNTER_NODE, "--include", HHSDK, "--out", join(dir, "cli"), "--json"], {
        out: (t) => out.push(t),
        err: (t) => out.push(t),
      }),
    );
    expect(code, out.join("\n")).toBe(0);
    const report = JSON.parse(out.join("")) as { digest: string; initrd_bytes: number };
    expect(report.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(report.initrd_bytes).toBeGreaterThan(0);
  }, 120_000);

  it("a corrupt image is refused with DATA_LOSS before anything boots", async () => {
    await buildCounterImage(dir, "corrupt");
    const initrd = join(dir, "corrupt", "initrd.cpio.gz");
    const bytes = readFileSync(initrd);
    bytes[100] = (bytes[100] ?? 0) ^ 0xff;
    writeFileSync(initrd, bytes);
    expect(await codeOf(openImage(join(dir, "corrupt")))).toMatch(/^data_loss: .*corrupt/);
    expect(await codeOf(openImage(dir))).toMatch(/^invalid_argument: .*not a vm image/);
  }, 120_000);

  it("bad input: a missing program, a missing include, an import from outside the image, a program that never listens — clear errors, no image written", async () => {
    const out = join(dir, "bad");
    const build = (python: string, includes: string[] = []) => buildImage({ python, includes, args: [], out });
    expect(await codeOf(build(join(dir, "nope.py")))).toMatch(/^invalid_argument: --python .*no such file/);
    expect(await codeOf(build(COUNTER_NODE, [join(dir, "nodir")]))).toMatch(
      /^invalid_argument: --include .*no such directory/,
    );
    // counter_node.py imports hhsdk from its own directory: without --include the guest would lack it.
    expect(await codeOf(build(COUNTER_NODE))).toMatch(/^invalid_argument: .*hhsdk.*--include/s);
    const quitter = join(dir, "quitter.py");
    writeFileSync(quitter, "print('bye')\n");
    expect(await codeOf(build(quitter))).toMatch(/^invalid_argument: .*did not start listening on HARNESS_PORT/);
    expect(existsSync(out)).toBe(false);
    expect(ErrorCode.InvalidArgument).toBe("invalid_argument");
  }, 120_000);

  it("nodeImageRefusesBadInput: --node with --python, an unresolvable import, a program that exits — clear errors, no image written", async () => {
    const out = join(dir, "badnode");
    const build = (opts: { node?: string; python?: string }) => buildImage({ ...opts, includes: [], args: [], out });
    expect(await codeOf(build({ node: NODE_COUNTER, python: COUNTER_NODE }))).toMatch(
      /^invalid_argument: give exactly one of --python FILE and --node FILE/,
    );
    expect(await codeOf(build({ node: join(dir, "nope.mjs") }))).toMatch(/^invalid_argument: --node .*no such file/);
    const missing = join(dir, "missing.mjs");
    writeFileSync(missing, 'import "./not-there.mjs";\n');
    expect(await codeOf(build({ node: missing }))).toMatch(
      /^invalid_argument: --node missing\.mjs: bundling failed: .*not-there/,
    );
    const quitter = join(dir, "quitter.mjs");
    writeFileSync(quitter, 'console.log("bye");\n');
    expect(await codeOf(build({ node: quitter }))).toMatch(
      /^invalid_argument: quitter\.mjs did not start listening on HARNESS_PORT .*\(exit 0\)\n.*bye/s,
    );
    expect(existsSync(out)).toBe(false);
  }, 120_000);

  it("nodeListenCheckSeesIncludesAsInTheGuest: the build-time run finds --include directories beside the bundle, as in /app, and nothing else of the program's directory", async () => {
    const conf = join(dir, "conf");
    mkdirSync(conf, { recursive: true });
    writeFileSync(join(conf, "greeting.txt"), "hi\n");
    const program = Buffer.from(
      'import { readFileSync } from "node:fs";\nimport { createServer } from "node:net";\n' +
        'readFileSync("conf/greeting.txt");\ncreateServer().listen(Number(process.env.HARNESS_PORT), "127.0.0.1");\n',
    );
    await checkNodeListens(program, "reader.mjs", [conf], []);
    expect(await codeOf(checkNodeListens(program, "reader.mjs", [], []))).toMatch(
      /^invalid_argument: reader\.mjs did not start listening .*ENOENT.*conf\/greeting\.txt/s,
    );
  }, 120_000);
});
