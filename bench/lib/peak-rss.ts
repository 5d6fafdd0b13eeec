// The peak RSS of one `harnesshost` command run in a child process (bench/lib/peak-rss-cli.ts).
// Invariant: a command that fails is an error, never a reading.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("./peak-rss-cli.ts", import.meta.url));

/** Runs `harnesshost ARGS` in a fresh node process; resolves its peak RSS in MiB and its wall time. */
export function peakRssOf(args: readonly string[]): Promise<{ mib: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", CHILD, ...args],
      { maxBuffer: 64 * 1024 * 1024 },
      (err, _stdout, stderr) => {
        const ms = performance.now() - t0;
        if (err) return reject(new Error(`harnesshost ${args.join(" ")} failed: ${stderr.slice(-500)}`));
        const m = /peak_rss_kib=(\d+)/.exec(stderr);
        if (!m?.[1]) return reject(new Error(`harnesshost ${args[0]}: no peak_rss_kib in ${stderr.slice(-300)}`));
        resolve({ mib: Number(m[1]) / 1024, ms });
      },
    );
  });
}
