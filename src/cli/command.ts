// The shape of a CLI command and the flags every command shares. Invariant: flags are validated
// before any command touches a journal or a server; a usage error exits 2 and changes nothing.
import type { ParseArgsConfig } from "node:util";
import type { SessionsApi } from "./api.js";

export type FlagValues = Record<string, string | boolean | string[] | undefined>;

export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
}

export interface CommandContext extends CommandIo {
  readonly values: FlagValues;
  readonly positionals: readonly string[];
  /** The host the command talks to: in-process (--data/--journal) or remote (--server). */
  api(): Promise<SessionsApi>;
}

export interface Command {
  readonly name: string;
  readonly usage: string;
  readonly options: NonNullable<ParseArgsConfig["options"]>;
  /** The command only reads: its in-process journal is opened read-only (works on a read-only data directory). */
  readonly readOnly?: boolean;
  run(ctx: CommandContext): Promise<number>;
}

/** Raised for bad command-line input; exits 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  /** @param showUsage false for a refusal whose one line says everything (no usage line after it). */
  constructor(
    message: string,
    readonly showUsage = true,
  ) {
    super(message);
  }
}

/** Flags shared by every command that reads or writes sessions. */
export const HOST_FLAGS = {
  data: { type: "string" },
  journal: { type: "string" },
  server: { type: "string" },
  "token-file": { type: "string" },
  "tls-ca": { type: "string" },
  project: { type: "string" },
  json: { type: "boolean" },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

export function str(values: FlagValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
}

export function requireStr(values: FlagValues, name: string): string {
  const v = str(values, name);
  if (v === undefined || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

export function int(values: FlagValues, name: string, fallback: number, min = 0): number {
  const v = str(values, name);
  if (v === undefined) return fallback;
  if (!/^-?\d+$/.test(v)) throw new UsageError(`--${name} must be an integer, got ${JSON.stringify(v)}`);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}`);
  return n;
}

export function json(values: FlagValues): boolean {
  return values["json"] === true;
}
