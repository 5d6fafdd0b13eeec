// Resolved limits and the errors that name them. Invariants: a Limits object holds one safe integer
// per row of LIMIT_TABLE, each ≥ its minimum, built only through resolveLimits (defaults overlaid with
// validated overrides); a request refused for a limit is RESOURCE_EXHAUSTED (too much) or
// INVALID_ARGUMENT (malformed beyond a limit) with a message that names the limit, its value and how
// to raise it.
import { z } from "zod";
import { ErrorCode, HostError } from "../errors/index.js";
import { LIMIT_TABLE, type LimitSpec } from "./table.js";

export { LIMIT_TABLE, type LimitScope, type LimitSpec, type LimitUnit } from "./table.js";

export type LimitName = keyof typeof LIMIT_TABLE;
export type Limits = { readonly [K in LimitName]: number };

export const LIMIT_NAMES = Object.keys(LIMIT_TABLE) as LimitName[];

function spec(name: LimitName): LimitSpec {
  return LIMIT_TABLE[name];
}

export const DEFAULT_LIMITS: Limits = Object.freeze(
  Object.fromEntries(LIMIT_NAMES.map((n) => [n, spec(n).default])) as Limits,
);

/** Partial overrides as accepted from a config file or flags (unknown names are refused). */
export const LimitOverrides = z
  .object(
    Object.fromEntries(
      LIMIT_NAMES.map((n) => [
        n,
        z
          .number()
          .int()
          .min(spec(n).min ?? 1)
          .max(Number.MAX_SAFE_INTEGER)
          .optional(),
      ]),
    ) as { [K in LimitName]: z.ZodOptional<z.ZodNumber> },
  )
  .strict();
export type LimitOverrides = z.infer<typeof LimitOverrides>;

export function resolveLimits(overrides: LimitOverrides = {}): Limits {
  const checked = LimitOverrides.parse(overrides);
  const out: Record<string, number> = { ...DEFAULT_LIMITS };
  for (const n of LIMIT_NAMES) {
    const v = checked[n];
    if (v !== undefined) out[n] = v;
  }
  return Object.freeze(out) as Limits;
}

export function isLimitName(name: string): name is LimitName {
  return Object.hasOwn(LIMIT_TABLE, name);
}

/** Parses `NAME=VALUE` (VALUE an integer, optionally with a KiB/MiB/GiB suffix for byte limits). */
export function parseLimitFlag(flag: string): [LimitName, number] {
  const m = /^([A-Za-z]+)=(\d+)(KiB|MiB|GiB)?$/.exec(flag);
  if (!m) throw new Error(`expected NAME=INTEGER (e.g. inputBytes=2MiB), got ${JSON.stringify(flag)}`);
  const name = m[1] ?? "";
  if (!isLimitName(name)) throw new Error(`unknown limit ${JSON.stringify(name)}; known: ${LIMIT_NAMES.join(", ")}`);
  const suffix = m[3];
  if (suffix !== undefined && spec(name).unit !== "bytes") throw new Error(`${name} is not in bytes`);
  const scale = suffix === "GiB" ? 1024 ** 3 : suffix === "MiB" ? 1024 ** 2 : suffix === "KiB" ? 1024 : 1;
  const value = Number(m[2]) * scale;
  const min = spec(name).min ?? 1;
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be an integer ≥ ${min}`);
  return [name, value];
}

/** A byte count for messages: "3.9 MiB", "812 B". */
export function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${round(n / 1024 ** 3)} GiB`;
  if (n >= 1024 ** 2) return `${round(n / 1024 ** 2)} MiB`;
  if (n >= 1024) return `${round(n / 1024)} KiB`;
  return `${n} B`;
}

function round(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(1);
}

function amount(name: LimitName, n: number): string {
  return spec(name).unit === "bytes" ? formatBytes(n) : `${n} ${spec(name).unit}`;
}

/**
 * RESOURCE_EXHAUSTED for `what` being `actual` where limit `name` allows `limit`. The message names
 * the limit so an operator can find it in docs/operations.md and raise it with `--limit`.
 */
export function overLimit(name: LimitName, limit: number, actual: number | undefined, what: string): HostError {
  const got = actual === undefined ? "" : ` (${amount(name, actual)})`;
  return new HostError(
    ErrorCode.ResourceExhausted,
    `${what}${got} exceeds limit ${name}=${amount(name, limit)} (docs/operations.md, serve --limit ${name}=N)`,
  );
}

/** INVALID_ARGUMENT for input malformed beyond limit `name` (too deep, an id too long). */
export function beyondLimit(name: LimitName, limit: number, what: string): HostError {
  return new HostError(
    ErrorCode.InvalidArgument,
    `${what} exceeds limit ${name}=${amount(name, limit)} (docs/operations.md)`,
  );
}

/** The limits table of docs/operations.md, rendered from LIMIT_TABLE. */
export function limitsTableMarkdown(): string {
  const rows = LIMIT_NAMES.map((n) => {
    const s = spec(n);
    const def = s.unit === "bytes" ? `${formatBytes(s.default)} (${s.default})` : String(s.default);
    return `| \`${n}\` | ${s.scope} | ${def} | ${s.unit} | ${s.what} | ${s.why} |`;
  });
  return [
    "| limit | guards | default | unit | what is counted, and what happens past it | why this default |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}
