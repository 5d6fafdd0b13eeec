// A foreground `serve` or `node` started by `npx` (npm exec → sh -c → node) when npx goes away.
// npm exec does not pass SIGTERM on to the command it runs, so after `npx harnesshost serve &` a
// `kill $!` ends npx and leaves the server running, holding its ports (docs/cli.md, "Background
// servers"). Invariant: when an `npm exec` process is among this process's first three ancestors and
// it exits, the server stops as on SIGTERM (checked every WATCH_MS); with no npm exec above it (a
// shell, a supervisor) nothing is watched, and a process `--detach` started never watches (the npx
// that ran `serve --detach` is its grandparent until it returns). Linux only (/proc); elsewhere a no-op.
import { readFileSync } from "node:fs";
import { isDetachedChild } from "./detach.js";

/** How often the npm exec ancestor is checked (ms): a stop after `kill $!` begins within this. */
export const WATCH_MS = 500;

interface ProcStat {
  readonly state: string;
  readonly ppid: number;
  /** Start time in clock ticks since boot: with the pid, names one process (pids are reused). */
  readonly start: string;
}

function procStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid … starttime(22nd field) …"; comm may hold spaces and parentheses.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", ppid: Number(fields[1]), start: fields[19] ?? "" };
  } catch {
    return undefined;
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return "";
  }
}

/** The npm exec (npx) process among the first three ancestors, if any. */
export function npmExecAncestor(): { pid: number; start: string } | undefined {
  let pid = process.ppid;
  for (let depth = 0; depth < 3 && pid > 1; depth++) {
    const stat = procStat(pid);
    if (stat === undefined) return undefined;
    if (/^npm exec( |$)/.test(commandLine(pid))) return { pid, start: stat.start };
    pid = stat.ppid;
  }
  return undefined;
}

/** Calls `onGone` once when the npm exec ancestor exits; returns a function that stops watching. */
export function watchNpmExec(onGone: () => void): () => void {
  const ancestor = isDetachedChild() ? undefined : npmExecAncestor();
  if (ancestor === undefined) return () => undefined;
  const timer = setInterval(() => {
    const stat = procStat(ancestor.pid);
    if (stat !== undefined && stat.start === ancestor.start && stat.state !== "Z" && stat.state !== "X") return;
    clearInterval(timer);
    onGone();
  }, WATCH_MS);
  timer.unref();
  return () => clearInterval(timer);
}
