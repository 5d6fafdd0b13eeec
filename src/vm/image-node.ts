// The Node half of `image build --node`: the program bundled into one self-contained ES module, checked
// to listen on the build machine, and the files the guest needs to run it. Invariants: the guest holds
// the node binary that runs this builder (with the shared objects it links), the reseed hook it
// preloads (guest-files.ts) and one JavaScript file of the program's — the bundle, whose bytes are a
// pure function of the program, the modules it imports and the bundler's version, and are what the
// build cache hashes; `harnesshost/sdk` in the program is this harnesshost's own SDK, so the guest
// node speaks the protocol of the host that built it.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { z } from "zod";
import { ErrorCode, HostError } from "../errors/index.js";
import { FROM_SOURCE, PACKAGE_ROOT } from "../paths.js";
import { freePort } from "./ports.js";

/** The node binary the guest runs: the one running this builder (so the bundle's target matches). */
export const HOST_NODE = process.execPath;
const LISTEN_DEADLINE_MS = 60_000;
/** ES-module output of CommonJS dependencies (@grpc/grpc-js) calls `require` for Node built-ins. */
const REQUIRE_SHIM =
  'import { createRequire as __harnesshostCreateRequire } from "node:module";\n' +
  "const require = __harnesshostCreateRequire(import.meta.url);";

/** This harnesshost's SDK entry: the TypeScript source in a checkout, the compiled module when installed. */
function sdkEntry(): string {
  return FROM_SOURCE ? join(PACKAGE_ROOT, "src/sdk/index.ts") : join(PACKAGE_ROOT, "dist/src/sdk/index.js");
}

type Esbuild = typeof import("esbuild");

async function loadEsbuild(): Promise<Esbuild> {
  try {
    return await import("esbuild");
  } catch (err) {
    throw new HostError(
      ErrorCode.FailedPrecondition,
      "image build --node bundles the program with esbuild, which is not installed here: add it to the project (npm install --save-dev esbuild)",
      { cause: err },
    );
  }
}

export interface NodeBundle {
  /** The self-contained ES module the guest runs. */
  readonly code: Buffer;
  readonly esbuildVersion: string;
}

/** Bundles the program and everything it imports (the SDK, @grpc/grpc-js, …) into one ES module. */
export async function bundleNode(program: string): Promise<NodeBundle> {
  const esbuild = await loadEsbuild();
  let result: Awaited<ReturnType<Esbuild["build"]>>;
  try {
    result = await esbuild.build({
      entryPoints: [program],
      absWorkingDir: dirname(program),
      bundle: true,
      platform: "node",
      format: "esm",
      target: `node${process.versions.node.split(".")[0] ?? "20"}`,
      alias: { "harnesshost/sdk": sdkEntry() },
      banner: { js: REQUIRE_SHIM },
      write: false,
      logLevel: "silent",
      legalComments: "none",
    });
  } catch (err) {
    const errors = (err as { errors?: { text: string; location?: { file: string; line: number } | null }[] }).errors;
    const detail = errors?.map((e) => `${e.location ? `${e.location.file}:${e.location.line}: ` : ""}${e.text}`);
    throw new HostError(
      ErrorCode.InvalidArgument,
      `--node ${basename(program)}: bundling failed: ${detail?.join("; ") ?? String(err)}`,
      { cause: err },
    );
  }
  const out = result.outputFiles?.[0];
  if (out === undefined) throw new HostError(ErrorCode.Internal, "esbuild wrote no output");
  return { code: Buffer.from(out.contents), esbuildVersion: esbuild.version };
}

function listening(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      res(true);
    });
    s.once("error", () => res(false));
  });
}

/**
 * Runs the bundle once on the build machine as the guest will — `node FILE ARGS…` with HARNESS_PORT, in
 * a directory holding only the bundle and the included directories (links), like the guest's /app —
 * until it listens; InvalidArgument with its output when it exits first or never listens.
 */
export async function checkNodeListens(
  bundle: Buffer,
  name: string,
  includes: readonly string[],
  args: readonly string[],
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "hh-image-node-"));
  const port = await freePort();
  const file = join(dir, name);
  writeFileSync(file, bundle);
  for (const d of includes) symlinkSync(d, join(dir, basename(d)));
  const child = spawn(HOST_NODE, [file, ...args], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HARNESS_PORT: String(port), LANG: "C.UTF-8" },
  });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (output += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (output += c));
  let exit: number | null | undefined;
  child.once("exit", (code) => (exit = code));
  try {
    const deadline = Date.now() + LISTEN_DEADLINE_MS;
    for (;;) {
      if (exit !== undefined || Date.now() > deadline)
        throw new HostError(
          ErrorCode.InvalidArgument,
          `${name} did not start listening on HARNESS_PORT when run on this machine` +
            `${exit !== undefined ? ` (exit ${String(exit)})` : ` after ${LISTEN_DEADLINE_MS} ms`}\n${output.slice(-2000)}`,
        );
      if (await listening(port)) return;
      await delay(50);
    }
  } finally {
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

const AgentFiles = z.object({ files: z.array(z.string()), executable: z.string() });

/** The interpreter files the guest control agent (agent.py) loads, listed by agent-files.py. */
export function agentPythonFiles(python: string, script: string): z.infer<typeof AgentFiles> {
  const r = spawnSync(python, ["-B", "-s", script], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C.UTF-8" },
  });
  try {
    return AgentFiles.parse(JSON.parse(r.stdout.trim().split("\n").at(-1) ?? ""));
  } catch (err) {
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `listing the guest agent's Python files failed (exit ${String(r.status)}):\n${r.stderr}`,
      { cause: err },
    );
  }
}
