// `harnesshost serve` as a real child process for fault-injection tests: start it, read its
// listening line, SIGKILL it (or one of its harness-node children) and start it again on the same data
// directory. Invariant: `kill()` returns only after the host and every node it had spawned are gone,
// so the next incarnation never races the previous one.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { basename, dirname } from "node:path";

import { freePort } from "../docs/sh-script.js";
import { CLI_ENTRY } from "../support/cli-entry.js";

export const BIN = CLI_ENTRY;

export interface ServeOptions {
  /** Arguments after `serve`. */
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** Receives every chunk the process writes to stderr (logs and the listening line). */
  readonly onStderr?: (chunk: string) => void;
}

/** The pids whose parent is `ppid` (Linux /proc). */
export function childPids(ppid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue;
    }
    // pid (comm) state ppid … — comm may hold spaces or parentheses, so parse after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[1]) === ppid && fields[0] !== "Z") out.push(Number(name));
  }
  return out;
}

/** The hh-nodes-* directory of a spawned node's unix socket (from its command line). */
function nodeSocketDir(pid: number): string | undefined {
  let argv: string[];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return undefined;
  }
  const listen = argv[argv.indexOf("--listen") + 1] ?? "";
  if (!listen.startsWith("unix://")) return undefined;
  const dir = dirname(listen.slice("unix://".length));
  return basename(dir).startsWith("hh-nodes-") ? dir : undefined;
}

export function pidAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Polls until `check` holds or the deadline passes. */
export async function until(what: string, check: () => boolean, deadlineMs = 30_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const running = new Set<ServeProcess>();

/** SIGKILLs every serve process started here that is still alive (for afterAll after a timeout). */
export async function killAllServeProcesses(): Promise<void> {
  await Promise.all([...running].map((p) => p.kill()));
}

export class ServeProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly addr: string,
    readonly registryAddr: string,
    readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>,
  ) {}

  get pid(): number {
    return this.child.pid ?? 0;
  }

  static async start(opts: ServeOptions): Promise<ServeProcess> {
    const child = spawn(process.execPath, [BIN, "serve", ...opts.args], {
      stdio: ["ignore", "ignore", "pipe"],
      env: opts.env ?? process.env,
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
      child.once("exit", (code, signal) => res({ code, signal })),
    );
    let text = "";
    const ready = await new Promise<RegExpExecArray>((res, rej) => {
      child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        opts.onStderr?.(chunk);
        if (text !== "\0") {
          text += chunk;
          const m = /harnesshost listening addr=(\S+) registry=(\S+)/.exec(text);
          if (m) {
            text = "\0";
            res(m);
          }
        }
      });
      void exited.then(({ code, signal }) =>
        rej(new Error(`serve exited (${code ?? signal}) before listening:\n${text}`)),
      );
    });
    const proc = new ServeProcess(child, ready[1] ?? "", ready[2] ?? "", exited);
    running.add(proc);
    void exited.then(() => running.delete(proc));
    return proc;
  }

  /** The harness-node processes this host spawned and that are still alive. */
  nodePids(): number[] {
    return childPids(this.pid);
  }

  /**
   * SIGKILL, then wait until the host and its nodes (which watch their stdin pipe) are gone, and remove
   * the socket directories the dead host can no longer clean up.
   */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const nodes = this.nodePids();
    const socketDirs = nodes.map(nodeSocketDir).filter((d): d is string => d !== undefined);
    this.child.kill("SIGKILL");
    await this.exited;
    await until(`the nodes of host ${this.pid} exit`, () => nodes.every((p) => !pidAlive(p)));
    for (const dir of socketDirs) rmSync(dir, { recursive: true, force: true });
  }

  /** SIGTERM and the exit code. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    this.child.kill("SIGTERM");
    return (await this.exited).code;
  }
}

/**
 * `serve` on `dataDir` at a free loopback port, registry and HTTP listeners off, warn-level logs, plus
 * `flags` (e.g. `--harness`, `--tools`, `--model`); the process and the address clients dial.
 */
export async function startLoopbackServe(
  dataDir: string,
  flags: Readonly<Record<string, string>>,
  env?: NodeJS.ProcessEnv,
): Promise<{ serve: ServeProcess; server: string }> {
  const server = `127.0.0.1:${await freePort()}`;
  const all = {
    "--data": dataDir,
    "--addr": server,
    "--registry-addr": "off",
    "--http-addr": "off",
    "--log-level": "warn",
    ...flags,
  };
  const serve = await ServeProcess.start({ args: Object.entries(all).flat(), ...(env ? { env } : {}) });
  return { serve, server };
}
