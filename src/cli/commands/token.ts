// `harnesshost token digest`: the line a server token file stores for a token (docs/operations.md
// "Principals, roles and projects"). Invariants: the token is read from stdin, never from an argument
// (an argument would sit in the shell's history and the process list), and is never written anywhere —
// only its SHA-256 digest leaves; a terminal on stdin is refused (what is typed there is echoed); the
// line is checked as the server would read it before it is printed.
import { readFileSync } from "node:fs";
import { tokenFileLine, type LineHolder } from "../../server/index.js";
import { type FlagValues, str, UsageError, type Command } from "../command.js";

/** The token on stdin: its first line, without the line break; refused from a terminal. */
function tokenFromStdin(): string {
  if (process.stdin.isTTY)
    throw new UsageError('the token is read from stdin, not a terminal: printf %s "$TOKEN" | harnesshost token digest');
  const [first = ""] = readFileSync(0, "utf8").split(/\r?\n/);
  return first;
}

function holderOf(values: FlagValues): LineHolder | undefined {
  const principal = str(values, "principal");
  const roles = str(values, "roles");
  const projects = str(values, "projects");
  const registrar = str(values, "registrar");
  if (registrar !== undefined) {
    if (principal !== undefined || roles !== undefined || projects !== undefined)
      throw new UsageError(
        "--registrar takes no --principal, --roles or --projects (a registrar may only use the registry)",
      );
    return { registrar };
  }
  if (principal === undefined) {
    if (roles !== undefined || projects !== undefined) throw new UsageError("--roles and --projects need --principal");
    return undefined;
  }
  if (roles === undefined) throw new UsageError("--principal needs --roles (reader, operator, approver, admin)");
  return { principal, roles, ...(projects !== undefined ? { projects } : {}) };
}

export const tokenCommand: Command = {
  name: "token",
  usage: "token digest [--principal NAME --roles R[,R] [--projects P[,P]|*] | --registrar NAME]   (the token on stdin)",
  options: {
    principal: { type: "string" },
    roles: { type: "string" },
    projects: { type: "string" },
    registrar: { type: "string" },
  },
  async run(ctx) {
    const [sub, ...rest] = ctx.positionals;
    if (sub !== "digest")
      throw new UsageError(
        sub === undefined ? "a subcommand is required: digest" : `unknown subcommand ${JSON.stringify(sub)}`,
      );
    if (rest.length > 0) throw new UsageError("the token is read from stdin, never from an argument");
    const holder = holderOf(ctx.values);
    const token = tokenFromStdin();
    try {
      ctx.out(tokenFileLine(token, holder));
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err), false);
    }
    return 0;
  },
};
