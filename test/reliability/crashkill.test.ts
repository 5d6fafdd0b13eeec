// Crash-kill (docs/operations.md, "What survives what"): SIGKILL of the host and of harness nodes at seeded random points while echo
// and counter sessions run; after every restart the chains verify, no acknowledged record is lost,
// interrupted turns are re-driven with at most one extra model call per cut, every-turn counters
// continue and on-suspend counters report their lost RAM and recover by fork. Each of those recovery
// paths must have run at least once, and at least one turn must have been cut: the driver plans its
// first two kills on events (a host kill while a model call is held open, a node kill right after an
// on-suspend counter's unsnapshotted turn), so they do not depend on scheduling. Short mode by default;
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
    "after SIGKILLs of host and nodes: chains verify, nothing acknowledged is lost, cut turns re-driven with ≤ 1 extra model call, lost RAM reported and recovered by fork",
    async () => {
      const report = await runCrashKill(options);
      console.log(JSON.stringify({ ...report, violations: report.violations.length }));
      expect(report.violations).toEqual([]);
      expect(report.kills).toBeGreaterThanOrEqual(options.kills);
      // Every recovery path the test names ran at least once.
      expect(report.hostKills, "host kills").toBeGreaterThan(0);
      expect(report.nodeKills, "node kills").toBeGreaterThan(0);
      expect(report.cutTurns, "turns cut by a kill").toBeGreaterThan(0);
      expect(report.redrivenTurns, "cut turns a Resume re-drove to completion").toBeGreaterThan(0);
      expect(report.lostRamReported, "lost-RAM refusals").toBeGreaterThan(0);
      expect(report.forkRecoveries, "fork recoveries").toBeGreaterThan(0);
      expect(report.lost).toBe(0);
      expect(report.maxExtraModelCallsPerCut).toBeLessThanOrEqual(1);
      expect(report.recordsVerified).toBeGreaterThanOrEqual(report.recordsAcknowledged > 0 ? 1 : 0);
      expect(report.turnsAcknowledged).toBeGreaterThan(options.kills);
    },
    FULL ? 3_600_000 : 240_000,
  );
});
