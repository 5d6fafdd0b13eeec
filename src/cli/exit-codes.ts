// The CLI's exit codes and how a failure becomes one. Invariant: every command's exit status comes
// from this one table (docs/cli.md prints it); a failure's status follows its gRPC status name, the
// same whether the command ran in process or against --server.
import type { StatusCode } from "../client/errors.js";
import { CliError, UsageError } from "./command.js";

export const ExitCode = {
  Ok: 0,
  /** A check or verification found a problem (verify, conformance), or the operation failed inside. */
  Failed: 1,
  /** Bad command-line input, or a request the host rejected as invalid. Nothing was changed. */
  Usage: 2,
  /** No such session, harness, journal or file. */
  NotFound: 3,
  /** Refused by a precondition: tier, parked on a wait, diverged, retired, name taken. */
  Refused: 4,
  /** Busy or aborted: another operation holds the session, a stale expected seq, a limit, a deadline. */
  Busy: 5,
  /** The host could not be reached, or refused the caller's credentials. */
  Unavailable: 6,
  /** Stored records or snapshots fail verification or are missing. */
  DataLoss: 7,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit code of a failure with gRPC status `code`. */
export function exitCodeOf(code: StatusCode): ExitCode {
  switch (code) {
    case "INVALID_ARGUMENT":
    case "OUT_OF_RANGE":
      return ExitCode.Usage;
    case "NOT_FOUND":
      return ExitCode.NotFound;
    case "FAILED_PRECONDITION":
    case "ALREADY_EXISTS":
      return ExitCode.Refused;
    case "ABORTED":
    case "RESOURCE_EXHAUSTED":
    case "DEADLINE_EXCEEDED":
    case "CANCELLED":
      return ExitCode.Busy;
    case "UNAVAILABLE":
    case "UNAUTHENTICATED":
    case "PERMISSION_DENIED":
      return ExitCode.Unavailable;
    case "DATA_LOSS":
      return ExitCode.DataLoss;
    case "INTERNAL":
    case "UNKNOWN":
    case "UNIMPLEMENTED":
      return ExitCode.Failed;
    default: {
      const exhaustive: never = code;
      throw new Error(`unmapped status ${String(exhaustive)}`);
    }
  }
}

/** A failure as the CLI reports it: a status name, one line of text, and the exit code. */
export interface CliFailure {
  readonly code: StatusCode;
  readonly message: string;
  readonly exit: ExitCode;
}

function systemError(err: unknown): { code: string; path?: string } | undefined {
  if (typeof err !== "object" || err === null || !("code" in err) || typeof err.code !== "string") return undefined;
  const path = "path" in err && typeof err.path === "string" ? err.path : undefined;
  return { code: err.code, ...(path !== undefined ? { path } : {}) };
}

/**
 * A transport failure said in terms of the flags: nobody listening at --server, or a listener there
 * that is not the service the command needs (the registry port given for the Sessions API, or the
 * reverse) — both UNAVAILABLE: the service the command needs is not at that address.
 */
function transportFailure(code: StatusCode, message: string, server: string | undefined): CliFailure | undefined {
  if (server === undefined) return undefined;
  if (code === "UNAVAILABLE" && /ECONNREFUSED|ENOENT/.test(message))
    return {
      code,
      message: `no host answers at ${server} (connection refused): start one with \`harnesshost serve\`, or check --server`,
      exit: ExitCode.Unavailable,
    };
  const wrong = /does not implement the method \/agentsessions\.v1\.(Sessions|HarnessRegistry)\//.exec(message);
  if (code === "UNIMPLEMENTED" && wrong)
    return {
      code: "UNAVAILABLE",
      message:
        wrong[1] === "Sessions"
          ? `${server} answers but is not a Sessions API (is it the registry port?): give --server the address of \`serve --addr\` (default 127.0.0.1:7233)`
          : `${server} answers but is not a harness registry (is it the Sessions port?): give --server the address of \`serve --registry-addr\` (default 127.0.0.1:7234)`,
      exit: ExitCode.Unavailable,
    };
  return undefined;
}

/**
 * Classifies any error a command threw; `server` is the --server the command was given, if any.
 * The client's error module (and with it grpc-js) is loaded only here, on a failure that needs it,
 * so `--help` and `--version` start without loading gRPC.
 */
export async function cliFailure(err: unknown, server?: string): Promise<CliFailure> {
  if (err instanceof UsageError) return { code: "INVALID_ARGUMENT", message: err.message, exit: ExitCode.Usage };
  if (err instanceof CliError) return { code: err.status, message: err.message, exit: exitCodeOf(err.status) };
  const sys = systemError(err);
  if (sys?.code === "ENOENT" && sys.path !== undefined)
    return { code: "NOT_FOUND", message: `no such file or directory: ${sys.path}`, exit: ExitCode.NotFound };
  if ((sys?.code === "EACCES" || sys?.code === "EPERM") && sys.path !== undefined)
    return { code: "PERMISSION_DENIED", message: `permission denied: ${sys.path}`, exit: ExitCode.Failed };
  const { clientError } = await import("../client/errors.js");
  const e = clientError(err);
  return transportFailure(e.code, e.message, server) ?? { code: e.code, message: e.message, exit: exitCodeOf(e.code) };
}
