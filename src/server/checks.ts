// Request validation shared by the Sessions and HarnessRegistry services. Invariant: every check runs
// before a handler touches the journal or a runtime, and a failed check is an INVALID_ARGUMENT
// HostError naming the offending field — so a bad request changes nothing.
import type { Message } from "@bufbuild/protobuf";
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

/** Refuses fields this host does not know (protobuf-es keeps them in $unknown on decode). */
export function noUnknownFields(msg: Message | undefined, path: string): void {
  if (msg === undefined) return;
  const unknown = (msg as { $unknown?: readonly unknown[] }).$unknown;
  if (unknown !== undefined && unknown.length > 0) throw invalid(`${path} carries unknown fields`);
}

/** Refuses an enum number outside the declared members (open proto3 enums keep unknown numbers). */
export function knownEnum(value: number, members: object, field: string): void {
  if (!Object.values(members).includes(value)) throw invalid(`${field} has unknown value ${value}`);
}
