// One host-owned harness node child process. Invariant: the process is considered live only between
// its "listening" announcement and its exit; it dies with the host (it watches its stdin pipe). Its
// NodeInfo is asked once, at start: `incrementalHistory` is what the process negotiated (§8.8).
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import type { Client } from "@grpc/grpc-js";
import { ErrorCode, HostError } from "../errors/index.js";
import { ActorsClient } from "../node/actors-client.js";
import type { NodeInfo } from "../node/actors-client.js";
import { DEFAULT_NODE_LIMITS, type NodeLimits } from "../node/limits.js";
import { dialHarness } from "../node/remote-harness.js";
import { CLI_SCRIPT } from "../paths.js";

/** How long a node may take to start listening (ms): from source, tsx compiles the CLI on first start. */
export const NODE_START_TIMEOUT_MS = 30_000;

/**
 * `HARNESSHOST_NODE_CPU_PROF_DIR=<dir>` makes every spawned node write a V8 CPU profile there when it
 * exits (diagnostics only; docs/performance.md shows how to read one).
 */
function profilingFlags(): string[] {
  const dir = process.env.HARNESSHOST_NODE_CPU_PROF_DIR;
  return dir ? ["--cpu-prof", `--cpu-prof-dir=${dir}`] : [];
}

export class NodeProcess {
  readonly sessions = new Set<string>();
  readonly actors: ActorsClient;
  readonly connection: Client;
  private exited = false;
  private stopping = false;
  private readonly exitWaiters: (() => void)[] = [];
  idleTimer: NodeJS.Timeout | undefined;
  /** Whether the node answered NodeInfo with incremental_history (docs/protocol.md §8.8). */
  incrementalHistory = false;
  /** Whether the node drops named restored instances only (docs/protocol.md §8.5). */
  instanceDrops = false;
  /** Whether the node serves PutHistory (docs/protocol.md §8.10). */
  historyUpload = false;
  /** Whether the node restores from a file it reads itself (docs/protocol.md §8.9): it runs on this machine. */
  restoreFromFile = false;
  /** Whether the node writes snapshots to files the host names (docs/protocol.md §8.11). */
  snapshotToFile = false;

  private constructor(
    readonly child: ChildProcess,
    readonly address: string,
    readonly pid: number,
    limits: NodeLimits,
  ) {
    this.actors = new ActorsClient({ address, limits });
    this.connection = dialHarness(address, limits.eventBytes);
    child.once("exit", () => {
      this.exited = true;
      this.actors.close();
      this.connection.close();
      for (const w of this.exitWaiters.splice(0)) w();
    });
  }

  /** False from the moment a stop is requested: a stopping node takes no new actors. */
  get alive(): boolean {
    return !this.exited && !this.stopping;
  }

  static async start(
    target: string,
    socketPath: string,
    limits: NodeLimits = DEFAULT_NODE_LIMITS,
  ): Promise<NodeProcess> {
    const child = spawn(
      process.execPath,
      [
        ...profilingFlags(),
        CLI_SCRIPT,
        "node",
        "--harness",
        target,
        "--listen",
        `unix://${socketPath}`,
        "--parent-stdin",
      ],
      {
        stdio: ["pipe", "pipe", "inherit"],
        env: process.env,
      },
    );
    const lines = createInterface({ input: child.stdout! });
    const announced = await new Promise<{ address: string; pid: number }>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          fail(
            new HostError(
              ErrorCode.Unavailable,
              `harness node for "${target}" did not start within ${NODE_START_TIMEOUT_MS} ms`,
            ),
          ),
        NODE_START_TIMEOUT_MS,
      );
      const fail = (err: Error) => {
        clearTimeout(timer);
        child.kill("SIGKILL");
        reject(err);
      };
      child.once("exit", (code) =>
        fail(
          new HostError(ErrorCode.Unavailable, `harness node for "${target}" exited (code ${code}) before listening`),
        ),
      );
      child.once("error", (err) =>
        fail(new HostError(ErrorCode.Unavailable, `cannot start harness node: ${err.message}`)),
      );
      lines.on("line", (line) => {
        try {
          const msg = JSON.parse(line) as { event?: string; address?: string; pid?: number };
          if (msg.event === "listening" && msg.address) {
            clearTimeout(timer);
            child.removeAllListeners("exit");
            child.removeAllListeners("error");
            resolve({ address: msg.address, pid: msg.pid ?? child.pid ?? 0 });
          }
        } catch {
          // not an announcement
        }
      });
    });
    lines.on("line", () => undefined);
    const node = new NodeProcess(child, announced.address, announced.pid, limits);
    const info = await node.nodeInfo();
    node.incrementalHistory = info?.incrementalHistory ?? false;
    node.instanceDrops = info?.instanceDrops ?? false;
    node.historyUpload = node.incrementalHistory && (info?.historyUpload ?? false);
    node.restoreFromFile = info?.restoreFromFile ?? false;
    node.snapshotToFile = info?.snapshotToFile ?? false;
    return node;
  }

  /**
   * The node's NodeInfo, or undefined when it has none (no Actors) or does not answer within nodeCallMs
   * (it then gets full histories).
   */
  private async nodeInfo(): Promise<NodeInfo | undefined> {
    try {
      return await this.actors.nodeInfo();
    } catch {
      return undefined;
    }
  }

  /** Asks the node to stop and waits for the exit (SIGKILL after a grace period). */
  async stop(graceMs = 3000): Promise<void> {
    if (this.exited) return;
    this.stopping = true;
    const exited = new Promise<void>((r) => this.exitWaiters.push(r));
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  }

  /** For crash tests: kill without warning. */
  kill(): void {
    this.stopping = true;
    this.child.kill("SIGKILL");
  }
}
