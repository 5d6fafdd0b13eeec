// Crash-kill (SPEC §14): SIGKILL of the host and of harness nodes at seeded random points while echo
// and counter sessions run; after every restart the chains verify, no acknowledged record is lost,
// interrupted turns are re-driven with at most one extra model call per cut, every-turn counters
// continue and on-suspend counters report their lost RAM and recover by fork. Short mode by default;
// HH_CRASHKILL_FULL=1 runs ≥ 50 kills (HH_CRASHKILL_SEED picks the seed).
import { afterAll, describe, expect, it } from "vitest";
import { runCrashKill, type CrashKillOptions } from "./crashkill.js";
import { killAllServeProcesses } from "./serve-process.js";

// A run cut short by the test timeout must not leave a host behind.
afterAll(killAllServeProcesses);

const FULL = process.env["HH_CRASHKILL_FULL"] === "1";
const SEED = Number(process.env["HH_CRASHKILL_SEED"] ?? 20240611);
const started = Date.now();
const log =
  FULL || process.env["HH_CRASHKILL_LOG"] === "1"
    ? (l: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${l}`)
    : undefined;

const options: CrashKillOptions = FULL
  ? { seed: SEED, kills: 60, sessions: { echo: 3, "echo-sp": 2, counter: 3, "counter-os": 2 }, ...(log ? { log } : {}) }
  : { seed: SEED, kills: 4, sessions: { echo: 2, "echo-sp": 0, counter: 1, "counter-os": 1 }, ...(log ? { log } : {}) };

describe(`crash-kill (${FULL ? "full" : "short"} mode, seed ${SEED})`, () => {
  it(
    "after SIGKILLs of host and nodes: chains verify, nothing acknowledged is lost, cut turns re-driven with ≤ 1 extra model call",
    async () => {
      const report = await runCrashKill(options);
      console.log(JSON.stringify({ ...report, violations: report.violations.length }));
      expect(report.violations).toEqual([]);
      expect(report.kills).toBeGreaterThanOrEqual(options.kills);
      expect(report.hostKills).toBeGreaterThan(0);
      expect(report.lost).toBe(0);
      expect(report.maxExtraModelCallsPerCut).toBeLessThanOrEqual(1);
      expect(report.recordsVerified).toBeGreaterThanOrEqual(report.recordsAcknowledged > 0 ? 1 : 0);
      expect(report.turnsAcknowledged).toBeGreaterThan(options.kills);
    },
    FULL ? 3_600_000 : 240_000,
  );
});
