// The benchmark runner's smoke run: `--quick --json --out` exits 0 and measures every figure key below
// (the figures docs/performance.md reports) and nothing else. It never asserts a number's size (tests do not time things).
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const KEYS = [
  "journal_append_ratio",
  "replay_ratio",
  "turn_latency_ratio",
  "turn_latency_tcp_ratio",
  "wire_turn_ratio",
  "serve_ready_ms",
  "python_echo_turn_ratio",
  "long_session_ratio",
  "suspend_resume_p50_ms",
  "suspend_resume_ratio",
  "snapshot_codec_ratio",
  "snapshot_throughput_ratio",
  "fork_fanout_ratio",
  "fork_blob_copies",
  "memory_restore_1mb_p50_ms",
  "memory_snapshot_100mb_mb_per_s",
  "memory_fork_100mb_ms",
  "memory_fork_100mb_blobs",
  "concurrent_turns_per_s",
  "concurrent_errors",
  "suspended_session_rss_bytes",
  "live_echo_actor_rss_bytes",
  "agent_turn_ratio_10k",
  "obs_metrics_turn_ratio",
  "obs_tracing_turn_ratio",
  "obs_metrics_append_ratio",
  "obs_tracing_append_ratio",
  "authz_turn_ratio",
  "ai_sdk_turn_ratio",
  "openai_agents_turn_ratio",
  "group_commit_appends_per_s",
  "group_commit_ratio",
  "group_commit_p99_ratio",
  "pg_append_p50_ms",
  "pg_group_commit_appends_per_s",
  "pg_group_commit_ratio",
  "pg_turn_ratio",
  "pg_scaleout_2_hosts_ratio",
  "pg_scaleout_3_hosts_ratio",
  "pg_scaleout_1_host_turns_per_s",
  "long_session_1m_ratio",
  "cold_resume_1m_ms",
  "verify_1m_peak_rss_mib",
  "export_1m_peak_rss_mib",
  "long_session_1m_compacted_ratio",
  "storage_per_turn_ratio",
  "turn_10k_resident_p50_ratio",
  "turn_10k_resident_p99_ratio",
  "host_rss_per_live_session_bytes",
  "host_rss_per_suspended_session_bytes",
  "first_touch_1k_ratio",
  "first_touch_1m_ms",
];

const dir = mkdtempSync(join(tmpdir(), "harnesshost-bench-smoke-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * `npm run bench -- ARGS` (tsx bench/run.ts) as one process: node with tsx's loader runs the same
 * bench/run.ts, without the two node starts npx and the tsx launcher add around it (about 1 s of CPU a run).
 */
function runBench(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "bench/run.ts", ...args],
      { cwd: process.cwd(), maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe("npm run bench -- --quick", () => {
  it("exits 0 and measures every figure key", async () => {
    const out = join(dir, "bench.json");
    const run = await runBench(["--quick", "--json", "--out", out]);
    expect(run.code, run.stderr).toBe(0);
    const fromFile = JSON.parse(readFileSync(out, "utf8")) as {
      quick: boolean;
      figures: Record<string, Record<string, unknown>>;
    };
    const fromStdout = JSON.parse(run.stdout) as typeof fromFile;
    expect(fromStdout.figures).toEqual(fromFile.figures);
    expect(fromFile.quick).toBe(true);
    // Every figure's prerequisites are in this tree, so every key must be measured.
    expect(Object.keys(fromFile.figures).sort()).toEqual([...KEYS].sort());
    for (const key of KEYS) {
      const entry = fromFile.figures[key];
      expect(entry?.["status"], `${key}: ${JSON.stringify(entry)}`).toBe("ok");
      expect(typeof entry?.["value"], key).toBe("number");
      expect(Number.isFinite(entry?.["value"]), key).toBe(true);
    }
    // The scale-out figure starts three serve processes from source: most of the run on a shared machine.
  }, 300_000);

  it("refuses an unknown --only key with a non-zero exit", async () => {
    const run = await runBench(["--quick", "--only", "no_such_figure"]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("no_such_figure");
  }, 60_000);
});
