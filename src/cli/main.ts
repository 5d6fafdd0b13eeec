// The `harnesshost` command. Invariant: a usage error exits 2, a failed operation exits 1 with one
// `harnesshost: …` line on stderr, success exits 0; nothing is written for a usage error.
import { parseArgs } from "node:util";
import { isHostError } from "../errors/index.js";
import { UsageError, type Command, type CommandIo } from "./command.js";
import { commands } from "./commands/index.js";
import { openApi } from "./host-flags.js";

function help(io: CommandIo): void {
  io.out("usage: harnesshost <command> [flags]\n\ncommands:");
  for (const c of commands) io.out(`  ${c.name.padEnd(12)} ${c.summary}`);
  io.out("\nRun `harnesshost <command> --help` for its flags.");
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
  const command: Command | undefined = commands.find((c) => c.name === name);
  if (!command) {
    io.err(`harnesshost: unknown command ${JSON.stringify(name)}`);
    help(io);
    return 2;
  }
  try {
    if (rest.includes("--help") || rest.includes("-h")) {
      io.out(`usage: harnesshost ${command.usage}`);
      return 0;
    }
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({ args: [...rest], options: command.options, allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
    return await command.run({ ...io, values, positionals: parsed.positionals, api: () => openApi(values) });
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`harnesshost ${command.name}: ${err.message}\nusage: harnesshost ${command.usage}`);
      return 2;
    }
    const message = isHostError(err) ? err.message : err instanceof Error ? err.message : String(err);
    io.err(`harnesshost: ${message}`);
    return 1;
  }
}
