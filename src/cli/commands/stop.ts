// `harnesshost stop --pid-file F`: stops a background `serve` or `node` and returns once it has exited
// (docs/cli.md, "Background servers"). Invariants: it signals only a live process whose command line is
// a harnesshost one (a stale file naming a reused pid is not obeyed); it waits, polling with a deadline,
// until the process is gone, so the next `serve` on the same ports cannot race the old one; a process
// that is already gone is success (its stale pid file is removed).
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { readPidFile, removePidFile } from "../background/pid-file.js";
import { ErrorCode, HostError } from "../../errors/index.js";
import { int, requireStr, UsageError, type Command } from "../command.js";

/** Default bound on the wait (ms): a host's default drain (drainMs) plus its forced-exit margin, with room. */
export const DEFAULT_STOP_TIMEOUT_MS = 60_000;
const POLL_MS = 50;

/** Whether `pid` is a running process (an exited one its parent has not reaped yet is not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    // /proc/PID/stat: "pid (comm) STATE …"; Z is a zombie, X dead.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/\)\s+[ZX]\s/.test(stat);
  } catch {
    return true;
  }
}

/** On Linux, whether `pid` runs harnesshost (elsewhere: assumed, as there is no /proc to ask). */
function runsHarnesshost(pid: number): boolean {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return process.platform !== "linux";
  }
  return cmdline.includes("harnesshost");
}

export const stopCommand: Command = {
  name: "stop",
  usage: "stop --pid-file F [--timeout-ms 60000]",
  options: { "pid-file": { type: "string" }, "timeout-ms": { type: "string" } },
  async run(ctx) {
    if (ctx.positionals.length > 0) throw new UsageError(`unexpected arguments: ${ctx.positionals.join(" ")}`);
    const file = requireStr(ctx.values, "pid-file");
    const timeoutMs = int(ctx.values, "timeout-ms", DEFAULT_STOP_TIMEOUT_MS, 1);
    let pid: number | undefined;
    try {
      pid = readPidFile(file);
    } catch (err) {
      throw new HostError(ErrorCode.FailedPrecondition, err instanceof Error ? err.message : String(err));
    }
    if (pid === undefined)
      throw new HostError(ErrorCode.NotFound, `no pid file ${file}: nothing was started with --pid-file ${file}`);
    if (!alive(pid) || !runsHarnesshost(pid)) {
      removePidFile(file, pid);
      ctx.out(`not running (pid ${pid}); removed ${file}`);
      return 0;
    }
    process.kill(pid, "SIGTERM");
    const deadline = Date.now() + timeoutMs;
    while (alive(pid)) {
      if (Date.now() > deadline)
        throw new HostError(
          ErrorCode.DeadlineExceeded,
          `pid ${pid} did not exit within ${timeoutMs} ms of SIGTERM; it is still draining or stuck (kill -KILL ${pid} ends it)`,
        );
      await sleep(POLL_MS);
    }
    removePidFile(file, pid);
    ctx.out(`stopped pid ${pid}`);
    return 0;
  },
};
