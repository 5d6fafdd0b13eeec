// What the Python SDK tests share: the system interpreter (Debian's, with python3-grpcio and
// python3-protobuf), the checkout's root, a runner that keeps a program's output, and a node started
// from an example that resolves once it printed its ready line. Invariant: every child started here is
// stopped by its own pid.
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const PYTHON = "/usr/bin/python3";
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const EXAMPLES = join(ROOT, "python", "examples");
/** The SDK from the checkout (python/harnesshost), for the examples. */
export const SDK_PATH = join(ROOT, "python");

export interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program to its exit with `env` added to this process's environment, keeping its output. */
export function run(cmd: string, args: readonly string[], env: Record<string, string> = {}): Promise<Finished> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    child.once("error", reject);
    child.once("close", (code) => resolvePromise({ code, stdout, stderr }));
  });
}

export interface PythonNode {
  readonly address: string;
  readonly child: ChildProcess;
}

/** Starts `python3 EXAMPLE --listen LISTEN`; resolves with the address of its `ready ADDRESS` line. */
export function startExample(example: string, listen: string): Promise<PythonNode> {
  const child = spawn(PYTHON, ["-B", join(EXAMPLES, example), "--listen", listen], {
    cwd: ROOT,
    env: { ...process.env, PYTHONPATH: SDK_PATH },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  return new Promise((resolvePromise, reject) => {
    child.once("error", reject);
    child.once("exit", (code) =>
      reject(new Error(`${example} exited (${String(code)}) before it was ready:\n${stderr}`)),
    );
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line.startsWith("ready ")) resolvePromise({ address: line.slice("ready ".length), child });
    });
  });
}

/** SIGTERM, then resolves once the process exited. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGTERM");
  await exited;
}
