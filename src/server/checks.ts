// Request validation shared by the Sessions, Console and versions services (a registration's spec is
// checked by the host, src/host/harness-spec.ts). Invariant: every check runs
// before a handler touches the journal or a runtime, and a failed check is an INVALID_ARGUMENT
// HostError naming the offending field — so a bad request changes nothing.
import { invalidArgument as invalid } from "../errors/index.js";

export { invalid };

/** A required string field. */
export function required(value: string, field: string): string {
  if (value === "") throw invalid(`${field} is required`);
  return value;
}

/** An int64 field as a safe JS number within [min, max]. */
export function int64(value: bigint, field: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (value < BigInt(min) || value > BigInt(max)) throw invalid(`${field} must be in ${min}..${max}, got ${value}`);
  return Number(value);
}
