// Order statistics and the paired measurement loop. Invariant: a subject and its raw baseline are
// measured in alternating repetitions of the same run, so drift on a shared machine hits both alike
// and the ratio stays meaningful when absolute numbers do not.
import type { Sample } from "./types.js";

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Nearest-rank percentile (p in 0..100). */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)));
  return s[rank - 1] as number;
}

export function sampleOf(xs: readonly number[], unit: string, withP99 = false): Sample {
  return withP99
    ? { median: median(xs), p99: percentile(xs, 99), n: xs.length, unit }
    : { median: median(xs), n: xs.length, unit };
}

export function nowMs(): number {
  return performance.now();
}

/** Milliseconds `fn` takes. */
export async function timeMs(fn: () => Promise<unknown> | unknown): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export interface PairedRuns {
  readonly subject: number[];
  readonly baseline: number[];
  /** subject/baseline of each repetition. */
  readonly ratios: number[];
}

/**
 * Runs `warmup` unrecorded then `reps` recorded repetitions of subject and baseline, alternating which
 * goes first, and returns what each repetition returned (a rate or a time, the caller's choice).
 */
export async function paired(
  reps: number,
  warmup: number,
  subject: (rep: number) => Promise<number>,
  baseline: (rep: number) => Promise<number>,
): Promise<PairedRuns> {
  const out: PairedRuns = { subject: [], baseline: [], ratios: [] };
  for (let i = 0; i < warmup + reps; i++) {
    let s: number;
    let b: number;
    if (i % 2 === 0) {
      s = await subject(i);
      b = await baseline(i);
    } else {
      b = await baseline(i);
      s = await subject(i);
    }
    if (i < warmup) continue;
    out.subject.push(s);
    out.baseline.push(b);
    out.ratios.push(s / b);
  }
  return out;
}

/** Rounds for display and JSON: 3 significant digits, integers above 1000 kept whole. */
export function round(x: number): number {
  if (!Number.isFinite(x)) return x;
  if (Math.abs(x) >= 1000) return Math.round(x);
  return Number(x.toPrecision(3));
}
