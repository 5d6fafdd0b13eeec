// The pid file of a background `serve` or `node` (docs/cli.md, "Background servers"). Invariants: the
// file appears only once every listener of the process is bound — written to a temporary name and
// renamed into place, so a reader never sees it empty or half-written — and holds only the pid and a
// newline (`kill $(cat F)` works); it is removed when the process stops cleanly, and only while it
// still names this process (a newer server's file is never removed).
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** Writes `pid` to `file` atomically, creating its folder. */
export function writePidFile(file: string, pid = process.pid): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${pid}.tmp`;
  writeFileSync(tmp, `${pid}\n`, { mode: 0o644 });
  renameSync(tmp, file);
}

/** The pid a pid file names, or undefined when the file is missing; a file without a pid is an Error. */
export function readPidFile(file: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const m = /^\s*(\d+)\s*$/.exec(text);
  const pid = m ? Number(m[1]) : Number.NaN;
  if (!Number.isSafeInteger(pid) || pid <= 1) throw new Error(`${file} does not hold a process id`);
  return pid;
}

/** Removes `file` if it still names `pid` (this process by default). */
export function removePidFile(file: string, pid = process.pid): void {
  try {
    if (readPidFile(file) === pid) rmSync(file, { force: true });
  } catch {
    // An unreadable or foreign file is left alone.
  }
}
