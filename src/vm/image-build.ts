// `harnesshost image build`: a bootable vm harness image (kernel + initramfs) for a Python program or a
// Node one (bundled: image-node.ts). Invariants: the build is reproducible — the initramfs is a pure
// function of the inputs (program, or the Node program's bundle, included directories, arguments, the
// node binary and the host's installed packages), written sorted with fixed metadata — and cached by
// the digest of those inputs, so an unchanged build copies the cached image.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, join, resolve, sep } from "node:path";
import { gzipSync } from "node:zlib";
import { z } from "zod";
import { ErrorCode, HostError } from "../errors/index.js";
import { freePort } from "./ports.js";
import { writeCpio } from "./cpio.js";
import {
  AGENT_FILES_PY,
  AGENT_PY,
  COMPILE_PY,
  GUEST_FILES,
  INIT_SH,
  PROBE_PY,
  RESEED_HOOK_CJS,
  RESEED_HOOK_PY,
} from "./guest-files.js";
import { GuestTree, findKernel, moduleLoadOrder, sharedObjects } from "./image-files.js";
import { GUEST_PORT, IMAGE_FORMAT, MANIFEST, type ImageManifest, imageDigest } from "./image-manifest.js";
import { HOST_NODE, type NodeBundle, agentPythonFiles, bundleNode, checkNodeListens } from "./image-node.js";

/** The interpreter the image carries (for the program and for the guest control agent): Debian's, whose
 * dist-packages hold python3-grpcio and -protobuf. */
export const HOST_PYTHON = "/usr/bin/python3";
const BUSYBOX = "/bin/busybox";
/** The kernel modules the guest loads (with their dependencies) to reach the network. */
const GUEST_MODULES = ["virtio_pci", "virtio_net"];
/** Bumped whenever the image layout changes, so old cache entries are not reused. */
const BUILDER_VERSION = "1";
/** Guest RAM (MiB) when --memory-mb is not given, by program language. A Node guest holds the ~100 MB
 * node binary in its RAM-backed root and a V8 heap; 192 MB is too little for that (see docs/runtimes.md). */
export const DEFAULT_MEMORY_MB = { python: 192, node: 384 } as const;
const PROBE_DEADLINE_S = 60;
/** Kernel command line: serial console, no output unless something goes wrong, freed pages zeroed
 * (so a snapshot skips them), a guest that powers off instead of rebooting on panic, and no IO-APIC
 * timer check (under software emulation on a loaded host the check can miss its ticks and panic
 * with "IO-APIC + timer doesn't work!"; seen on the 2-core CI machine). */
const CMDLINE =
  "console=ttyS0 quiet loglevel=3 rdinit=/init panic=-1 init_on_free=1 random.trust_cpu=on no_timer_check";

export interface BuildOptions {
  /** The Python program the guest runs as `python3 FILE ARGS…`. Exactly one of python and node. */
  readonly python?: string;
  /** The Node ES module the guest runs, bundled, as `node FILE ARGS…`. */
  readonly node?: string;
  /** Directories copied beside the program (/app/<basename>). */
  readonly includes: readonly string[];
  readonly args: readonly string[];
  readonly out: string;
  /** Guest RAM in MiB; default DEFAULT_MEMORY_MB by language. */
  readonly memoryMb?: number;
  /** Default: $XDG_CACHE_HOME/harnesshost/images or ~/.cache/harnesshost/images. */
  readonly cacheDir?: string;
  /** Build even when the cache holds the inputs' image (the result is then compared by the caller). */
  readonly noCache?: boolean;
}

export interface BuildResult {
  readonly manifest: ImageManifest;
  readonly cached: boolean;
  readonly out: string;
}

export function defaultCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache");
  return join(base, "harnesshost", "images");
}

function sha256(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

function need(path: string, pkg: string): void {
  if (!existsSync(path))
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `${path} is missing: install the Debian package ${pkg} (apt-get install ${pkg})`,
    );
}

/** Every regular file under a directory, as sorted [relative path, sha256] pairs. */
function treeDigest(dir: string): string {
  const tree = new GuestTree();
  tree.copyDir(dir, "d");
  return sha256(
    JSON.stringify(
      tree
        .list()
        .sort((a, b) => (a.path < b.path ? -1 : 1))
        .map((e) => [e.path, e.kind, e.kind === "file" ? sha256(e.data) : e.kind === "symlink" ? e.target : ""]),
    ),
  );
}

/** What the guest runs: a Python file, or a Node program and its bundle. */
type Program =
  | { readonly language: "python"; readonly path: string }
  | { readonly language: "node"; readonly path: string; readonly bundle: NodeBundle };

/** The program's share of the cache key: the Python source, or the Node bundle plus the node binary. */
function programDigest(p: Program): unknown {
  if (p.language === "python") return [basename(p.path), sha256(readFileSync(p.path))];
  return ["node", basename(p.path), sha256(p.bundle.code), p.bundle.esbuildVersion, sha256(readFileSync(HOST_NODE))];
}

/** The digest of everything the image is made from: the build cache's key. */
function inputsDigest(opts: BuildOptions, program: Program, includes: readonly string[], memoryMb: number): string {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query format fields, not a JS template
  const packages = spawnSync("dpkg-query", ["-W", "-f=${Package} ${Version}\\n"], { encoding: "utf8" }).stdout ?? "";
  return sha256(
    JSON.stringify({
      builder: BUILDER_VERSION,
      guest: Object.entries(GUEST_FILES).map(([name, text]) => [name, sha256(text)]),
      program: programDigest(program),
      includes: includes.map((d) => [basename(d), treeDigest(d)]),
      args: opts.args,
      memoryMb,
      packages: sha256(packages),
    }),
  );
}

const ProbeAnswer = z.union([
  z.object({ files: z.array(z.string()), executable: z.string() }),
  z.object({ error: z.string() }),
]);

/** Runs the program on the build machine (probe.py) and lists the interpreter files it loaded. Each
 * included directory is importable by its name, as it is in the guest (/app/<name> beside the program):
 * `--include python/harnesshost` makes the SDK package importable wherever the program lives. */
async function probe(
  scripts: string,
  program: string,
  includes: readonly string[],
  args: readonly string[],
): Promise<{ files: string[]; executable: string }> {
  const port = await freePort();
  const importable = [...new Set(includes.map((d) => dirname(d)))].join(":");
  const child = spawn(
    HOST_PYTHON,
    ["-B", "-s", join(scripts, "probe.py"), String(port), String(PROBE_DEADLINE_S), program, ...args],
    {
      cwd: dirname(program),
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        LANG: "C.UTF-8",
        ...(importable !== "" ? { PYTHONPATH: importable } : {}),
      },
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  const code = await new Promise<number | null>((res, rej) => {
    child.once("error", rej);
    child.once("close", res);
  });
  const line = stdout.trim().split("\n").at(-1) ?? "";
  let parsed: z.infer<typeof ProbeAnswer> | undefined;
  try {
    parsed = ProbeAnswer.parse(JSON.parse(line));
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || "error" in parsed || code !== 0)
    throw new HostError(
      ErrorCode.InvalidArgument,
      `${program} did not start listening on HARNESS_PORT when run on this machine` +
        `${parsed && "error" in parsed ? `: ${parsed.error}` : ""} (exit ${String(code)})\n${stderr.slice(-2000)}`,
    );
  return parsed;
}

/** Adds `__pycache__/*.pyc` (unchecked-hash) for every Python source in the tree (COMPILE_PY). */
function compileBytecode(scripts: string, tree: GuestTree): void {
  const staging = mkdtempSync(join(tmpdir(), "hh-image-pyc-"));
  try {
    const sources = tree.pythonSources();
    for (const s of sources) {
      mkdirSync(join(staging, dirname(s.path)), { recursive: true });
      writeFileSync(join(staging, s.path), s.data);
    }
    const r = spawnSync(HOST_PYTHON, ["-B", "-s", join(scripts, "compile.py"), staging], { encoding: "utf8" });
    if (r.status !== 0)
      throw new HostError(
        ErrorCode.InvalidArgument,
        `compiling the image's Python sources failed:\n${r.stdout}${r.stderr}`,
      );
    for (const s of sources) {
      const cache = join(dirname(s.path), "__pycache__");
      const stem = basename(s.path, ".py");
      for (const name of readdirSync(join(staging, cache)).filter(
        (n) => n.startsWith(`${stem}.`) && n.endsWith(".pyc"),
      ))
        tree.addFile(`${cache}/${name}`, readFileSync(join(staging, cache, name)), 0o644);
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

function under(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** Writes the build-machine scripts (probe.py, compile.py) to a private directory for `fn`, then removes it. */
async function withScripts<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "hh-image-scripts-"));
  try {
    writeFileSync(join(dir, "probe.py"), PROBE_PY);
    writeFileSync(join(dir, "compile.py"), COMPILE_PY);
    writeFileSync(join(dir, "agent-files.py"), AGENT_FILES_PY);
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The Python program's files: the interpreter and what the program loaded (probe.py), checked to be
 * inside the image; returns the guest command. */
async function addPython(
  tree: GuestTree,
  scripts: string,
  program: string,
  includes: readonly string[],
  args: readonly string[],
): Promise<string[]> {
  const loaded = await probe(scripts, program, includes, args);
  const system = loaded.files.filter((f) => f.startsWith("/usr/") || f.startsWith("/lib"));
  const outside = loaded.files.filter(
    (f) => !system.includes(f) && !under(f, scripts) && f !== program && !includes.some((d) => under(f, d)),
  );
  if (outside.length > 0)
    throw new HostError(
      ErrorCode.InvalidArgument,
      `the program imports files the image would not contain: ${outside.join(", ")} — add their directory with --include`,
    );
  addInterpreter(tree, loaded.executable, system);
  tree.addFile(`app/${basename(program)}`, readFileSync(program), 0o644);
  tree.addFile("hh/reseed_hook.py", Buffer.from(RESEED_HOOK_PY, "utf8"), 0o644);
  return [HOST_PYTHON, "-B", "-s", "/hh/reseed_hook.py", `/app/${basename(program)}`, ...args];
}

/** The Node program's files: the node binary, its shared objects and the bundle (checked to listen);
 * plus the Python files the control agent needs. Returns the guest command. */
async function addNode(
  tree: GuestTree,
  scripts: string,
  program: Program & { language: "node" },
  includes: readonly string[],
  args: readonly string[],
): Promise<string[]> {
  const name = basename(program.path);
  await checkNodeListens(program.bundle.code, name, includes, args);
  tree.copyHostPath(HOST_NODE);
  for (const lib of sharedObjects(HOST_NODE)) tree.copyHostPath(lib);
  const agent = agentPythonFiles(HOST_PYTHON, join(scripts, "agent-files.py"));
  addInterpreter(
    tree,
    agent.executable,
    agent.files.filter((f) => f.startsWith("/usr/") || f.startsWith("/lib")),
  );
  tree.addFile(`app/${name}`, program.bundle.code, 0o644);
  tree.addFile("hh/reseed-hook.cjs", Buffer.from(RESEED_HOOK_CJS, "utf8"), 0o644);
  return [HOST_NODE, "-r", "/hh/reseed-hook.cjs", `/app/${name}`, ...args];
}

/** python3 (the program's interpreter or only the agent's) with the given library files and their shared objects. */
function addInterpreter(tree: GuestTree, executable: string, files: readonly string[]): void {
  for (const f of [executable, HOST_PYTHON, ...files]) tree.copyHostPath(f);
  for (const so of [executable, ...files.filter((f) => f.endsWith(".so"))])
    for (const lib of sharedObjects(so)) tree.copyHostPath(lib);
}

async function assemble(
  scripts: string,
  opts: BuildOptions,
  program: Program,
  includes: readonly string[],
  memoryMb: number,
  inputs: string,
) {
  need(HOST_PYTHON, "python3");
  need(BUSYBOX, "busybox-static");
  const kernel = findKernel();
  const modules = moduleLoadOrder(kernel.modulesDir, GUEST_MODULES);

  const tree = new GuestTree();
  for (const d of ["proc", "sys", "dev", "tmp", "app"]) tree.addDir(d);
  const argv =
    program.language === "python"
      ? await addPython(tree, scripts, program.path, includes, opts.args)
      : await addNode(tree, scripts, program, includes, opts.args);
  tree.addFile("usr/bin/busybox", readFileSync(BUSYBOX), 0o755);
  for (const m of modules) tree.copyHostPath(join(kernel.modulesDir, m));
  for (const d of includes) tree.copyDir(d, `app/${basename(d)}`);
  tree.addFile("hh/agent.py", Buffer.from(AGENT_PY, "utf8"), 0o644);
  const init = INIT_SH.replaceAll("@MODULES@", modules.join(" "))
    .replaceAll("@RELEASE@", kernel.release)
    .replaceAll("@PORT@", String(GUEST_PORT))
    .replaceAll("@PYTHON@", HOST_PYTHON)
    .replaceAll("@COMMAND@", argv.map(shellQuote).join(" "));
  tree.addFile("init", Buffer.from(init, "utf8"), 0o755);

  compileBytecode(scripts, tree);
  const initrd = gzipSync(writeCpio(tree.list()), { level: 6 });
  const kernelBytes = readFileSync(kernel.vmlinuz);
  const partial = {
    kernel: { file: "kernel" as const, sha256: sha256(kernelBytes), release: kernel.release },
    initrd: { file: "initrd.cpio.gz" as const, sha256: sha256(initrd), bytes: initrd.length },
    cmdline: CMDLINE,
    memoryMb,
  };
  const manifest: ImageManifest = {
    format: IMAGE_FORMAT,
    digest: imageDigest(partial),
    ...partial,
    guestPort: GUEST_PORT,
    program: { language: program.language, file: basename(program.path), args: [...opts.args] },
    inputs,
  };
  return { manifest, kernelBytes, initrd };
}

function writeImage(dir: string, m: ImageManifest, kernel: Uint8Array, initrd: Uint8Array): void {
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(join(tmp, m.kernel.file), kernel);
  writeFileSync(join(tmp, m.initrd.file), initrd);
  writeFileSync(join(tmp, MANIFEST), `${JSON.stringify(m, null, 2)}\n`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  renameSync(tmp, dir);
}

export async function buildImage(opts: BuildOptions): Promise<BuildResult> {
  if ((opts.python === undefined) === (opts.node === undefined))
    throw new HostError(ErrorCode.InvalidArgument, "give exactly one of --python FILE and --node FILE");
  const language = opts.python !== undefined ? "python" : "node";
  const given = opts.python ?? opts.node ?? "";
  const path = resolve(given);
  if (!existsSync(path) || !statSync(path).isFile())
    throw new HostError(ErrorCode.InvalidArgument, `--${language} ${given}: no such file`);
  const includes = opts.includes.map((d) => resolve(d));
  for (const d of includes)
    if (!existsSync(d) || !statSync(d).isDirectory())
      throw new HostError(ErrorCode.InvalidArgument, `--include ${d}: no such directory`);
  const names = [basename(path), ...includes.map((d) => basename(d))];
  if (new Set(names).size !== names.length)
    throw new HostError(
      ErrorCode.InvalidArgument,
      `the program and included directories must have distinct names: ${names.join(", ")}`,
    );
  const memoryMb = opts.memoryMb ?? DEFAULT_MEMORY_MB[language];
  // The bundle is made before the cache lookup: its bytes cover every module the program imports.
  const program: Program =
    language === "python" ? { language, path } : { language, path, bundle: await bundleNode(path) };
  const out = resolve(opts.out);
  const inputs = inputsDigest(opts, program, includes, memoryMb);
  const cached = join(opts.cacheDir ?? defaultCacheDir(), inputs);
  if (!opts.noCache && existsSync(join(cached, MANIFEST))) {
    const manifest = JSON.parse(readFileSync(join(cached, MANIFEST), "utf8")) as ImageManifest;
    rmSync(out, { recursive: true, force: true });
    mkdirSync(dirname(out), { recursive: true });
    cpSync(cached, out, { recursive: true });
    return { manifest, cached: true, out };
  }
  const { manifest, kernelBytes, initrd } = await withScripts((scripts) =>
    assemble(scripts, opts, program, includes, memoryMb, inputs),
  );
  writeImage(cached, manifest, kernelBytes, initrd);
  writeImage(out, manifest, kernelBytes, initrd);
  return { manifest, cached: false, out };
}
