// The `harnesshost` command. Invariants: a usage error exits 2, a failed operation exits 1 with one
// `harnesshost: …` line on stderr, success exits 0; nothing is written for a usage error. `--help` and
// `--version` load no command module (the table in commands/index.ts loads one on use). A command's
// long flags are also accepted Go-style (`-session s`), as the reference's agentctl scripts write them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { PACKAGE_ROOT } from "../paths.js";
import { UsageError, type Command, type CommandIo } from "./command.js";
import { commands } from "./commands/index.js";
import { acceptGoStyleFlags } from "./go-flags.js";
import { openApi } from "./host-flags.js";

function help(io: CommandIo): void {
  io.out("usage: harnesshost <command> [flags]\n\ncommands:");
  for (const c of commands) io.out(`  ${c.name.padEnd(12)} ${c.summary}`);
  io.out("\nRun `harnesshost <command> --help` for its flags; `harnesshost --version` prints the version.");
}

/** The version in the package's own package.json. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version?: unknown };
  return typeof pkg.version === "string" ? pkg.version : "unknown";
}

async function messageOf(err: unknown): Promise<string> {
  const { isHostError } = await import("../errors/index.js");
  return isHostError(err) ? err.message : err instanceof Error ? err.message : String(err);
}

export async function main(
  argv: readonly string[],
  io: CommandIo = { out: (t) => console.log(t), err: (t) => console.error(t) },
): Promise<number> {
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
    io.err(`harnesshost: unknown command ${JSON.stringify(name)}`);
    help(io);
    return 2;
  }
  const command: Command = await entry.load();
  try {
    if (rest.includes("--help") || rest.includes("-h")) {
      io.out(`usage: harnesshost ${command.usage}`);
      return 0;
    }
    let parsed: ReturnType<typeof parseArgs>;
    try {
      const args = acceptGoStyleFlags(rest, command.options);
      parsed = parseArgs({ args, options: command.options, allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
    return await command.run({
      ...io,
      values,
      positionals: parsed.positionals,
      api: () => openApi(values, { readOnly: command.readOnly === true }),
    });
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(
        err.showUsage
          ? `harnesshost ${name}: ${err.message}\nusage: harnesshost ${command.usage}`
          : `harnesshost ${name}: ${err.message}`,
      );
      return 2;
    }
    io.err(`harnesshost: ${await messageOf(err)}`);
    return 1;
  }
}
