// The `harnesshost` command. Invariants: every exit status comes from the table in exit-codes.ts
// (0 ok, 2 usage — nothing written —, 1 and 3–7 by the failure's status); a failure is one
// `harnesshost: …` line on stderr, or with --json one {"error":{code,message}} document there.
// `--help` and `--version` load no command module (the table in commands/index.ts loads one on use).
// A command's long flags are also accepted Go-style (`-session s`), as the reference's agentctl
// scripts write them.
import { parseArgs } from "node:util";
import { packageVersion } from "./version.js";
import { UsageError, type Command, type CommandIo } from "./command.js";
import { didYouMean } from "../errors/suggest.js";
import { flagLines, usageLines } from "./help-text.js";
import { cliFailure, ExitCode } from "./exit-codes.js";
import { commands } from "./commands/index.js";
import { acceptGoStyleFlags } from "./go-flags.js";
import { openApi } from "./host-flags.js";

function help(io: CommandIo): void {
  io.out("usage: harnesshost <command> [flags]\n\ncommands:");
  for (const c of commands) io.out(`  ${c.name.padEnd(12)} ${c.summary}`);
  io.out("\nRun `harnesshost <command> --help` for its flags; `harnesshost --version` prints the version.");
  io.out(EXIT_LINE);
}

const EXIT_LINE =
  "exit status: 0 ok, 1 check failed, 2 usage, 3 not found, 4 refused (precondition), 5 busy/aborted, 6 unavailable/unauthenticated, 7 data loss, 8 parked (exec: waiting for approve/answer) (docs/cli.md)";

/** A command's --help: its usage (wrapped), every flag it accepts with its meaning here, and the exit statuses. */
function commandHelp(command: Command, io: CommandIo): void {
  for (const line of usageLines(command.usage)) io.out(line);
  io.out("\nflags:");
  for (const line of flagLines(command)) io.out(line);
  io.out(`\n${EXIT_LINE}`);
}

/** parseArgs' "Unknown option '--x'" as our one line, with the closest flag the command has. */
function unknownFlag(message: string, command: Command): string | undefined {
  const flag = /^Unknown option '(-{1,2}[^'=]+)/.exec(message)?.[1];
  if (flag === undefined) return undefined;
  const hint = didYouMean(
    flag,
    Object.keys(command.options).map((o) => `--${o}`),
  );
  return `unknown flag ${flag}${hint}; \`harnesshost ${command.name} --help\` lists its flags`;
}

/** Exit status when the reader of stdout went away (`… | head`): 128 + SIGPIPE, as Unix tools do. */
export const EPIPE_EXIT = 141;

/** The process's stdout/stderr; a closed stdout pipe ends the process quietly with EPIPE_EXIT. */
function processIo(): CommandIo {
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(EPIPE_EXIT);
    throw err;
  });
  return {
    out: (t) => console.log(t),
    err: (t) => console.error(t),
    write: (t) => void process.stdout.write(t),
  };
}

export async function main(argv: readonly string[], io: CommandIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    help(io);
    return name ? 0 : 2;
  }
  if (name === "--version" || name === "-v" || name === "version") {
    io.out(packageVersion());
    return 0;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    const hint = didYouMean(
      name,
      commands.map((c) => c.name),
    );
    io.err(`harnesshost: unknown command ${JSON.stringify(name)}${hint}; \`harnesshost --help\` lists the commands`);
    return ExitCode.Usage;
  }
  const command: Command = await entry.load();
  let server: string | undefined;
  try {
    if (rest.includes("--help") || rest.includes("-h")) {
      commandHelp(command, io);
      return 0;
    }
    let parsed: ReturnType<typeof parseArgs>;
    try {
      const args = acceptGoStyleFlags(rest, command.options);
      parsed = parseArgs({ args, options: command.options, allowPositionals: true, strict: true });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const unknown = unknownFlag(message, command);
      throw unknown !== undefined ? new UsageError(unknown, false) : new UsageError(message);
    }
    const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
    server = typeof values["server"] === "string" ? values["server"] : undefined;
    return await command.run({
      ...io,
      values,
      positionals: parsed.positionals,
      argv: rest,
      api: (options) => openApi(values, { readOnly: command.readOnly === true, ...options }),
    });
  } catch (err) {
    const failure = await cliFailure(err, server);
    if (rest.includes("--json") || rest.includes("-json"))
      io.err(JSON.stringify({ error: { code: failure.code, message: failure.message } }));
    else if (err instanceof UsageError)
      io.err(
        err.showUsage
          ? [`harnesshost ${name}: ${err.message}`, ...usageLines(command.usage)].join("\n")
          : `harnesshost ${name}: ${err.message}`,
      );
    else io.err(`harnesshost: ${failure.message}`);
    return failure.exit;
  }
}
