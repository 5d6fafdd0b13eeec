// The conformance suite's initializer and report shapes. Invariant: options are validated with zod at
// the boundary (CLI flags and library callers alike), and every check result is exactly one of
// pass | fail | skip with evidence text a reader can act on.
import { z } from "zod";

export const TierOption = z.enum(["auto", "stateless", "memory"]);
export type TierOption = z.infer<typeof TierOption>;

/** The tier a check belongs to. */
export type Tier = "stateless" | "memory";

export const ConformanceOptions = z.object({
  /** A built-in harness name (echo, counter, chat), a harness module path, or a running node's address. */
  harness: z.string().min(1, "harness target is required"),
  /** `auto` reads the tier the harness declares in Describe. */
  tier: TierOption.default("auto"),
  /** Turns driven before each interruption (N). At least 2, so a historical seq exists. */
  turns: z.number().int().min(2).max(50).default(3),
  /** Children per memory fork (k). */
  forks: z.number().int().min(1).max(16).default(2),
  /** The host's model: "echo" or an OpenAI-compatible base URL (must answer deterministically). */
  model: z.string().min(1).default("echo"),
  /** Model id sent to an OpenAI-compatible provider. */
  modelName: z.string().optional(),
  /** Only run checks whose id is listed (default: every check of the tier). */
  only: z.array(z.string()).optional(),
  /** Upper bound (ms) on any one host operation; a hung harness fails its check instead of hanging. */
  operationTimeoutMs: z.number().int().min(1000).default(60_000),
});
export type ConformanceOptions = z.infer<typeof ConformanceOptions>;
export type ConformanceOptionsInput = z.input<typeof ConformanceOptions>;

export type CheckStatus = "pass" | "fail" | "skip";

export interface CheckResult {
  readonly id: string;
  readonly tier: Tier;
  readonly title: string;
  readonly status: CheckStatus;
  readonly evidence: string;
  readonly durationMs: number;
}

export interface Report {
  /** The target as given. */
  readonly harness: string;
  readonly tier: Tier;
  /** The descriptor id the harness reported ("" when Describe failed). */
  readonly descriptorId: string;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly durationMs: number;
  readonly checks: readonly CheckResult[];
}

/** Live progress of a run, in order: one `start` per run, `check-start`/`check-end` per check. */
export type ProgressEvent =
  | { readonly type: "start"; readonly harness: string; readonly tier: Tier; readonly checks: readonly string[] }
  | {
      readonly type: "check-start";
      readonly id: string;
      readonly tier: Tier;
      readonly index: number;
      readonly total: number;
    }
  | { readonly type: "check-end"; readonly result: CheckResult; readonly index: number; readonly total: number };

export type ProgressListener = (event: ProgressEvent) => void;

/** Summarises results into a report. */
export function summarize(
  harness: string,
  tier: Tier,
  descriptorId: string,
  checks: readonly CheckResult[],
  durationMs: number,
): Report {
  const count = (s: CheckStatus) => checks.filter((c) => c.status === s).length;
  return {
    harness,
    tier,
    descriptorId,
    passed: count("pass"),
    failed: count("fail"),
    skipped: count("skip"),
    durationMs,
    checks,
  };
}
