// How a failure becomes the CLI's exit status and one line of text. Invariant: every command's exit
// status comes from the one error table (ERROR_TABLE in src/errors, printed in docs/cli.md); a
// failure's status follows its error code — or, from a server, its gRPC status name — the same
// whether the command ran in process or against --server.
import type { StatusCode } from "../client/errors.js";
import { ERROR_TABLE, ExitCode, exitCodeOfStatus, grpcStatusNameOf, HostError } from "../errors/index.js";
import { UsageError } from "./command.js";

export { ExitCode } from "../errors/index.js";

/** The exit code of a failure with gRPC status `code` (ERROR_TABLE's `exit` of the code it reads as). */
export function exitCodeOf(code: StatusCode): ExitCode {
  return exitCodeOfStatus(code);
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
  // A HostError the CLI or an in-process host raised (not a status read from a server): the table's row.
  if (err instanceof HostError && err.constructor === HostError) {
    const code = grpcStatusNameOf(err.code);
    return (
      transportFailure(code, err.message, server) ?? { code, message: err.message, exit: ERROR_TABLE[err.code].exit }
    );
  }
  const sys = systemError(err);
  if (sys?.code === "ENOENT" && sys.path !== undefined)
    return { code: "NOT_FOUND", message: `no such file or directory: ${sys.path}`, exit: ExitCode.NotFound };
  if ((sys?.code === "EACCES" || sys?.code === "EPERM") && sys.path !== undefined)
    return { code: "PERMISSION_DENIED", message: `permission denied: ${sys.path}`, exit: ExitCode.Failed };
  const { clientError } = await import("../client/errors.js");
  const e = clientError(err);
  return (
    transportFailure(e.status, e.message, server) ?? { code: e.status, message: e.message, exit: exitCodeOf(e.status) }
  );
}
