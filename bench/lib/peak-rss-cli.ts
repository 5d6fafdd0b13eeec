// Runs one `harnesshost` command (argv after the script) in this process and then reports the process's
// peak resident set on stderr as `peak_rss_kib=N` (VmHWM from /proc/self/status, else
// process.resourceUsage().maxRSS). Invariant: the figure that spawns it reads a fresh process's peak,
// so what one command costs is not mixed with the bench runner's own heap.
import { readFileSync } from "node:fs";
import { main } from "../../src/cli/run.js";

function peakKib(): number {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (m?.[1]) return Number(m[1]);
  } catch {
    // Not Linux: fall through to the portable reading.
  }
  return process.resourceUsage().maxRSS;
}

const code = await main(process.argv.slice(2));
process.stderr.write(`\npeak_rss_kib=${peakKib()}\n`);
process.exitCode = code;
