// The shape of a CLI command and the flags every command shares. Invariant: flags are validated
// before any command touches a journal or a server; a usage error exits 2 and changes nothing.
import { ErrorCode, HostError } from "../errors/index.js";
import type { ParseArgsConfig } from "node:util";
import type { SessionsApi } from "./api.js";
import type { OpenOptions } from "./open-options.js";

export type FlagValues = Record<string, string | boolean | string[] | undefined>;

export interface CommandIo {
  /** One line on stdout. */
  out(text: string): void;
  /** One line on stderr. */
  err(text: string): void;
  /** Text on stdout without a newline (streamed output); absent: partial text is not shown. */
  write?(text: string): void;
}

export interface CommandContext extends CommandIo {
  readonly values: FlagValues;
  readonly positionals: readonly string[];
  /** The command's arguments as given (after the command name), for re-running it (`--detach`). */
  readonly argv: readonly string[];
  /**
   * The host the command talks to: in-process (--data/--journal) or remote (--server). A missing
   * local journal is NOT_FOUND unless `create` is set.
   */
  api(options?: OpenOptions): Promise<SessionsApi>;
}

export interface Command {
  readonly name: string;
  readonly usage: string;
  readonly options: NonNullable<ParseArgsConfig["options"]>;
  /** The command only reads: its in-process journal is opened read-only (works on a read-only data directory). */
  readonly readOnly?: boolean;
  run(ctx: CommandContext): Promise<number>;
}

/**
 * Bad command-line input: an INVALID_ARGUMENT HostError (exits 2, like every invalid argument) that
 * also tells main whether to print the command's usage line after it. A failure the CLI finds by
 * itself otherwise (a missing local journal, say) is a plain HostError with its code; neither loads
 * any gRPC code (src/errors loads no transport).
 */
export class UsageError extends HostError {
  /** @param showUsage false for a refusal whose one line says everything (no usage line after it). */
  constructor(
    message: string,
    readonly showUsage = true,
  ) {
    super(ErrorCode.InvalidArgument, message);
  }
}

/** Flags shared by every command that reads or writes sessions. */
export const HOST_FLAGS = {
  data: { type: "string" },
  journal: { type: "string" },
  server: { type: "string" },
  "token-file": { type: "string" },
  "tls-ca": { type: "string" },
  "tls-cert": { type: "string" },
  "tls-key": { type: "string" },
  project: { type: "string" },
  json: { type: "boolean" },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

/** What each shared flag means; a command's --help lists the ones it accepts. */
export const HOST_FLAG_HELP: Readonly<Record<keyof typeof HOST_FLAGS, string>> = {
  server: "HOST:PORT of a running host's Sessions API (e.g. 127.0.0.1:7233; the registry port for `harness`)",
  journal: "run in this process on a journal: a SQLite file path or a postgres:// URL",
  data: "run in this process on DIR/journal.db (default ./.harnesshost when neither --server nor --journal)",
  "token-file":
    "with --server: send the first token in FILE (FILE#NAME: the line labelled principal=NAME) as `authorization: Bearer …`",
  "tls-ca": "with --server: use TLS and verify the host's certificate against this PEM CA",
  "tls-cert": "with --server and --tls-ca: a PEM client certificate (mutual TLS; needs --tls-key)",
  "tls-key": "the PEM key of --tls-cert",
  project: "the project (default: the host's default project)",
  json: 'print one JSON document on stdout; on failure {"error":{"code","message"}} on stderr',
};

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
