// Runs the checks of one tier against one harness target and reports progress as it goes.
// Invariant: every planned check yields exactly one result (pass, fail or skip) in plan order, an
// unexpected error fails only the check it happened in, and the suite's hosts are always closed.
import { ErrorCode, HostError } from "../errors/index.js";
import { Mediation } from "../gen/agentsessions/v1/common_pb.js";
import { Resumability } from "../gen/agentsessions/v1/harness_pb.js";
import type { Check } from "./checks/check.js";
import { memoryChecks } from "./checks/memory.js";
import { statelessChecks } from "./checks/stateless.js";
import { memoryUpgrade, statelessUpgrade } from "./checks/upgrade.js";
import { memoryWaitsChecks, statelessWaitsChecks } from "./checks/waits.js";
import { SuiteEnv } from "./env.js";
import { CheckFailure, errText } from "./evidence.js";
import { classifyTarget } from "./target.js";
import {
  ConformanceOptions,
  summarize,
  type CheckResult,
  type ConformanceOptionsInput,
  type ProgressListener,
  type Report,
  type Tier,
} from "./types.js";

/** Every check of a tier, in run order. */
export function checksOf(tier: Tier): readonly Check[] {
  switch (tier) {
    case "stateless":
      return statelessChecks;
    case "memory":
      return memoryChecks;
  }
}

/** Every check id of both tiers. */
export const CHECK_IDS: readonly string[] = [...statelessChecks, ...memoryChecks].map((c) => c.id);

/**
 * The durable-wait checks of a tier (docs/protocol.md §12): planned only for a harness whose descriptor declares a
 * REQUIRES_APPROVAL tool; their ids are `<tier>.waits-…`.
 */
export function waitsChecksOf(tier: Tier): readonly Check[] {
  return tier === "stateless" ? statelessWaitsChecks : memoryWaitsChecks;
}

export const WAITS_CHECK_IDS: readonly string[] = [...statelessWaitsChecks, ...memoryWaitsChecks].map((c) => c.id);

/**
 * The version-upgrade check of a tier (docs/versioning.md): planned only when named with `--check`
 * (`only`), since it serves the subject in-process as three versions; ids `<tier>.upgrade`.
 */
export function upgradeCheckOf(tier: Tier): Check {
  return tier === "stateless" ? statelessUpgrade : memoryUpgrade;
}

export const UPGRADE_CHECK_IDS: readonly string[] = [statelessUpgrade.id, memoryUpgrade.id];

/** An opened suite: the environment, the resolved tier and the checks it will run. */
export interface Suite {
  readonly options: ConformanceOptions;
  readonly tier: Tier;
  readonly descriptorId: string;
  readonly checks: readonly Check[];
  run(check: Check): Promise<CheckResult>;
  close(): Promise<void>;
}

export async function openSuite(input: ConformanceOptionsInput): Promise<Suite> {
  const options = ConformanceOptions.parse(input);
  const env = new SuiteEnv(options, classifyTarget(options.harness));
  try {
    let tier: Tier;
    let descriptorId = "";
    let gated = false;
    if (options.tier === "auto") {
      const d = await env.describe();
      descriptorId = d.id;
      gated = d.tools.some((t) => t.mediation === Mediation.REQUIRES_APPROVAL);
      tier = d.capabilities?.resumability === Resumability.REQUIRES_MEMORY_SNAPSHOT ? "memory" : "stateless";
    } else {
      tier = options.tier;
      const d = await env.describe().catch(() => undefined);
      descriptorId = d?.id ?? "";
      gated = d?.tools.some((t) => t.mediation === Mediation.REQUIRES_APPROVAL) ?? false;
    }
    const known = [...CHECK_IDS, ...WAITS_CHECK_IDS, ...UPGRADE_CHECK_IDS];
    const unknown = (options.only ?? []).filter((id) => !known.includes(id));
    if (unknown.length > 0)
      throw new HostError(
        ErrorCode.InvalidArgument,
        `unknown check id(s): ${unknown.join(", ")} (known: ${known.join(", ")})`,
      );
    const upgrade = upgradeCheckOf(tier);
    const planned = [
      ...checksOf(tier),
      ...(gated ? waitsChecksOf(tier) : []),
      ...(options.only?.includes(upgrade.id) === true ? [upgrade] : []),
    ];
    const checks = planned.filter((c) => options.only === undefined || options.only.includes(c.id));
    return {
      options,
      tier,
      descriptorId,
      checks,
      async run(check) {
        const started = performance.now();
        let status: CheckResult["status"];
        let evidence: string;
        try {
          const outcome = await check.run(env);
          status = outcome.status;
          evidence = outcome.evidence;
        } catch (err) {
          status = "fail";
          evidence = err instanceof CheckFailure ? err.evidence : `unexpected error: ${errText(err)}`;
        } finally {
          env.model.disarm();
        }
        return {
          id: check.id,
          tier: check.tier,
          title: check.title,
          status,
          evidence,
          durationMs: Math.round(performance.now() - started),
        };
      },
      close: () => env.close(),
    };
  } catch (err) {
    await env.close();
    throw err;
  }
}

/** Runs every check of the harness's tier and returns the report. */
export async function runConformance(input: ConformanceOptionsInput, onProgress?: ProgressListener): Promise<Report> {
  const started = performance.now();
  const suite = await openSuite(input);
  const results: CheckResult[] = [];
  try {
    onProgress?.({
      type: "start",
      harness: suite.options.harness,
      tier: suite.tier,
      checks: suite.checks.map((c) => c.id),
    });
    for (const [index, check] of suite.checks.entries()) {
      onProgress?.({ type: "check-start", id: check.id, tier: check.tier, index, total: suite.checks.length });
      const result = await suite.run(check);
      results.push(result);
      onProgress?.({ type: "check-end", result, index, total: suite.checks.length });
    }
  } finally {
    await suite.close();
  }
  return summarize(
    suite.options.harness,
    suite.tier,
    suite.descriptorId,
    results,
    Math.round(performance.now() - started),
  );
}
