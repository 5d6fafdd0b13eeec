// Runs the real `harnesshost` command as a child process (the published bin over dist/, kept current
// with the source by the tests' global set-up): its exit status, stdout and stderr exactly as a shell sees them.
import { execFile } from "node:child_process";

import { CLI_ENTRY, REPO } from "../support/cli-entry.js";

export { REPO };
export const BIN = CLI_ENTRY;

export interface BinResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `harnesshost ...args` in `cwd`; never throws for a non-zero exit. */
export function hh(cwd: string, ...args: string[]): Promise<BinResult> {
  return new Promise((res, rej) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, timeout: 120_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== "number") return rej(err);
        res({ code: typeof err?.code === "number" ? err.code : 0, stdout, stderr });
      },
    );
  });
}
