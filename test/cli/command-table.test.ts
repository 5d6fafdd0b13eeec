// The command table and the commands that need no module: --help lists every entry, --version prints
// the package's version, and every entry loads the command it names.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { commands } from "../../src/cli/commands/index.js";
import { main } from "../../src/cli/main.js";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("command table", () => {
  it("every command the CLI knows is listed exactly once and loads the command it names", async () => {
    const names = commands.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    for (const entry of commands) expect((await entry.load()).name).toBe(entry.name);
  });

  it("--help lists every command with its summary", async () => {
    const { code, out } = await cli("--help");
    expect(code).toBe(0);
    for (const c of commands) expect(out).toContain(`  ${c.name.padEnd(12)} ${c.summary}`);
  });

  it("--version prints the version of package.json", async () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(await cli("--version")).toEqual({ code: 0, out: pkg.version, err: "" });
  });

  it("a command's --help prints its usage; an unknown command exits 2", async () => {
    expect(await cli("exec", "--help")).toMatchObject({
      code: 0,
      out: expect.stringMatching(/^usage: harnesshost exec /),
    });
    expect(await cli("nope")).toMatchObject({ code: 2, err: expect.stringMatching(/unknown command "nope"/) });
  });
});
