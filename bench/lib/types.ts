// The shapes every benchmark figure shares. Invariant: a figure either measures (status "ok", with its
// raw baseline from the same run when it has one) or says why it cannot (status "unavailable");
// pass/fail is decided by the runner from the target, never by the figure.

export interface RunOptions {
  /** Tiny sizes and few repetitions: proves every figure runs, numbers are meaningless. */
  readonly quick: boolean;
  /** Also run the vm runtime figure (boots QEMU guests; `--vm`). */
  readonly vm?: boolean;
}

/** A target on a reading's `value`: ">=" means higher is better. */
export interface Target {
  readonly op: ">=" | "<=";
  readonly value: number;
}

/** One measured quantity: the median over repetitions, plus p99 where per-operation latencies exist. */
export interface Sample {
  readonly median: number;
  readonly p99?: number;
  /** Repetitions (or operations, for latencies) behind the median. */
  readonly n: number;
  readonly unit: string;
}

export type Detail = number | string | boolean;

/** What one JSON key reports. `value` is the quantity the key names (a ratio for *_ratio keys). */
export interface Reading {
  readonly value: number;
  readonly unit: string;
  readonly measured?: Sample;
  readonly baseline?: Sample & { readonly what: string };
  readonly ratio?: number;
  readonly target?: Target;
  readonly details?: Readonly<Record<string, Detail>>;
}

export type FigureResult =
  | (Reading & {
      readonly status: "ok";
      /**
       * Further keys measured by the same run (e.g. suspend_resume_p50_ms beside suspend_resume_ratio);
       * `{ unavailable }` when the figure could measure its main key but not this one.
       */
      readonly also?: Readonly<Record<string, Reading | { readonly unavailable: string }>>;
    })
  | { readonly status: "unavailable"; readonly reason: string; readonly details?: Readonly<Record<string, Detail>> };

export interface Figure {
  /** The JSON key of the figure's main reading. */
  readonly key: string;
  /** Keys the figure reports in `also`; they share its status when it is unavailable or crashes. */
  readonly extraKeys?: readonly string[];
  readonly title: string;
  /** How long the runner waits for it (default 60 s with --quick, 180 s without). */
  readonly timeoutMs?: { readonly quick: number; readonly full: number };
  run(opts: RunOptions): Promise<FigureResult>;
}

/** One key of the runner's JSON document. */
export type KeyReport =
  | (Reading & { readonly status: "ok"; readonly title: string; readonly pass?: boolean })
  | {
      readonly status: "unavailable";
      readonly title: string;
      readonly reason: string;
      readonly details?: Readonly<Record<string, Detail>>;
    }
  | { readonly status: "error"; readonly title: string; readonly error: string };

export interface BenchReport {
  readonly version: 1;
  readonly quick: boolean;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly node: string;
  readonly platform: string;
  readonly cpus: number;
  readonly figures: Readonly<Record<string, KeyReport>>;
}
