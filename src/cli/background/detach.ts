// `serve --detach` and `node --detach` (docs/cli.md, "Background servers"). Invariants: the command
// returns only once the detached process is listening (exit 0, its pid and addresses printed) or has
// exited (its own exit status, and the end of its log on stderr) — never while it is still starting;
// the detached process runs in a session of its own (a closed terminal or a finished script does not
// stop it), logs to its log file only, and is stopped by `harnesshost stop --pid-file F` or
// `kill <pid>`. The ready handshake is one IPC message, so nothing is polled.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { ErrorCode, HostError } from "../../errors/index.js";
import type { CommandIo } from "../command.js";

/** Set in the detached child's environment: it reports readiness over IPC. */
const DETACHED_ENV = "HARNESSHOST_DETACHED";
/** Read once and cleared at load, so the harness nodes this process spawns never inherit it. */
const startedDetached = process.env[DETACHED_ENV] === "1";
delete process.env[DETACHED_ENV];

/**
 * True in the process a `--detach` started (its parent has returned, or is about to): it keeps the
 * re-run's `--log-file` (its stdout and stderr already go there) and watches no `npm exec` ancestor —
 * the npx that ran the detaching command exits as soon as it returns.
 */
export function isDetachedChild(): boolean {
  return startedDetached;
}

/** What a listening process reports: the line to print (addresses, pid, log). */
export interface ReadyMessage {
  readonly ready: string;
}

function isReady(m: unknown): m is ReadyMessage {
  return typeof m === "object" && m !== null && typeof (m as { ready?: unknown }).ready === "string";
}

/** The last `n` lines of a log file ("" if it cannot be read). */
function logTail(file: string, n = 20): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-n).join("\n");
  } catch {
    return "";
  }
}

/**
 * Starts `harnesshost <command> <args…>` (without --detach) as a detached process logging to
 * `logFile`, and waits until it is ready or has exited. Returns the exit status for this command.
 */
export async function detach(
  command: string,
  args: readonly string[],
  logFile: string,
  io: CommandIo,
): Promise<number> {
  const script = process.argv[1];
  if (script === undefined)
    throw new HostError(ErrorCode.FailedPrecondition, "--detach: cannot tell which script runs harnesshost");
  mkdirSync(dirname(logFile), { recursive: true });
  const fd = openSync(logFile, "a");
  let child: ChildProcess;
  try {
    child = spawn(
      process.execPath,
      [...process.execArgv, script, command, ...args.filter((a) => a !== "--detach" && a !== "-detach")],
      { detached: true, stdio: ["ignore", fd, fd, "ipc"], env: { ...process.env, [DETACHED_ENV]: "1" } },
    );
  } finally {
    closeSync(fd);
  }
  // While we wait, an interrupt stops the starting process too (it is not in our process group).
  const stop = (): void => void child.kill("SIGTERM");
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    const outcome = await new Promise<{ ready: string } | { code: number | null; signal: string | null }>((resolve) => {
      child.on("message", (m) => isReady(m) && resolve({ ready: m.ready }));
      child.once("exit", (code, signal) => resolve({ code, signal }));
      child.once("error", (err) => {
        io.err(`harnesshost: could not start ${command}: ${err.message}`);
        resolve({ code: 1, signal: null });
      });
    });
    if ("ready" in outcome) {
      child.disconnect();
      child.unref();
      io.err(`${outcome.ready} pid=${child.pid ?? 0} log=${logFile}`);
      return 0;
    }
    const tail = logTail(logFile);
    if (tail !== "") io.err(tail);
    io.err(
      `harnesshost: ${command} exited (${outcome.code ?? outcome.signal}) before it was listening; its log is ${logFile}`,
    );
    return outcome.code !== null && outcome.code !== 0 ? outcome.code : 1;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

/**
 * Called by a listening `serve`/`node`: when it was started by `--detach`, tells the waiting command
 * (one IPC message) and lets the channel go, so the parent can exit. A no-op otherwise.
 */
export function reportReady(line: string): void {
  if (!startedDetached || process.send === undefined) return;
  process.send({ ready: line } satisfies ReadyMessage, () => {
    if (process.connected) process.disconnect();
  });
}
