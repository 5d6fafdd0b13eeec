// The command line as a newcomer meets it (issue 37, item 7), through the real bin: a mistyped command
// or flag gets the closest name and exits 2 having changed nothing; every command's --help gives each
// of its flags the meaning it has for that command, in usage lines wrapped at USAGE_WIDTH; a harness
// module that is not there is exit 3 (not found); a parked exec says only that it is parked and exits
// 8 (docs/cli.md's exit table), so a script tells parked from completed without a second call.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { commands } from "../../src/cli/commands/index.js";
import { ExitCode } from "../../src/cli/exit-codes.js";
import { USAGE_WIDTH } from "../../src/cli/help-text.js";
import { main } from "../../src/cli/main.js";
import { hh, REPO } from "./bin.js";

const dir = mkdtempSync(join(tmpdir(), "hh-help-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function inProcess(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => out.push(...t.split("\n")), err: (t) => err.push(...t.split("\n")) });
  return { code, out, err };
}

describe("typos", () => {
  it("anUnknownCommandNamesTheClosestOneAndExits2", async () => {
    const res = await hh(dir, "exce", "--input", "hi");
    expect(res.code).toBe(ExitCode.Usage);
    expect(res.stdout).toBe("");
    expect(res.stderr).toBe(
      'harnesshost: unknown command "exce"; did you mean exec?; `harnesshost --help` lists the commands\n',
    );
  }, 120_000);

  it("anUnknownFlagNamesTheClosestFlagOfThatCommandAndChangesNothing", async () => {
    const journal = join(dir, "typo.db");
    const res = await hh(dir, "exec", "--journal", journal, "--harnes", "echo", "--input", "hi");
    expect(res.code).toBe(ExitCode.Usage);
    expect(res.stderr).toBe(
      "harnesshost exec: unknown flag --harnes; did you mean --harness?; `harnesshost exec --help` lists its flags\n",
    );
    expect(existsSync(journal)).toBe(false);
  }, 120_000);
});

describe("--help", () => {
  it("everyCommandsHelpGivesEachOfItsFlagsAMeaning", async () => {
    for (const entry of commands) {
      const command = await entry.load();
      const { code, out } = await inProcess(entry.name, "--help");
      expect(code, entry.name).toBe(0);
      for (const flag of Object.keys(command.options)) {
        const line = out.find((l) => l.startsWith(`  --${flag} `));
        expect(line, `${entry.name} --${flag}`).toBeDefined();
        expect(line!.slice(`  --${flag} `.length).trim().length, `${entry.name} --${flag}`).toBeGreaterThan(10);
      }
    }
  });

  it("serveHelpDescribesTokenFileAndTlsCertAsTheServerUsesThem", async () => {
    const { out } = await inProcess("serve", "--help");
    const line = (flag: string): string => out.find((l) => l.startsWith(`  --${flag} `)) ?? "";
    expect(line("token-file")).toMatch(/require a bearer token/);
    expect(line("tls-cert")).toMatch(/serve TLS/);
    expect(out.join("\n")).not.toContain("with --server");
    // A client command keeps the client meaning.
    expect((await inProcess("get", "--help")).out.find((l) => l.startsWith("  --token-file "))).toMatch(
      /with --server: send/,
    );
  });

  it("usageLinesWrapAtTheUsageWidth", async () => {
    for (const entry of commands) {
      const { out } = await inProcess(entry.name, "--help");
      const usage = out.slice(0, out.indexOf("flags:"));
      expect(usage[0], entry.name).toMatch(new RegExp(`^usage: harnesshost ${entry.name}`));
      for (const line of usage) expect(line.length, `${entry.name}: ${line}`).toBeLessThanOrEqual(USAGE_WIDTH);
    }
    // A usage error shows the same wrapped usage.
    const bad = await inProcess("serve", "--node-idle-ms", "x");
    expect(bad.code).toBe(ExitCode.Usage);
    expect(bad.err.length).toBeGreaterThan(3);
    for (const line of bad.err) expect(line.length).toBeLessThanOrEqual(USAGE_WIDTH);
  });
});

describe("exit statuses", () => {
  it("aMissingHarnessModuleIsNotFoundExit3", async () => {
    const res = await hh(dir, "conformance", "--harness", "./missing.ts");
    expect(res.code).toBe(ExitCode.NotFound);
    expect(res.stderr).toMatch(/^harnesshost: harness module \S*missing\.ts not found/);
    expect(res.stderr).toContain(join(dir, "missing.ts"));
    expect((await hh(dir, "node", "--harness", "./missing.mjs", "--listen", "127.0.0.1:0")).code).toBe(
      ExitCode.NotFound,
    );
  }, 120_000);

  it("aParkedExecPrintsOnlyWhatItWaitsForAndExits8", async () => {
    const journal = join(dir, "parked.db");
    const parked = await hh(dir, "exec", "--journal", journal, "--harness", "ask", "--input", "hi");
    expect(parked.code).toBe(ExitCode.Parked);
    expect(parked.stdout).toMatch(/^awaiting approval: execution=[0-9a-f]{16} tool_call=w1 request_seq=4\n$/);
    const json = await hh(dir, "exec", "--journal", journal, "--harness", "question", "--input", "sea", "--json");
    expect(json.code).toBe(ExitCode.Parked);
    expect(JSON.parse(json.stdout)).toMatchObject({ parked: "question", pending_approval: { tool_call_id: "ask-0" } });
    const done = await hh(dir, "exec", "--journal", journal, "--harness", "echo", "--input", "hi", "--json");
    expect(done.code).toBe(ExitCode.Ok);
    expect(JSON.parse(done.stdout)).not.toHaveProperty("parked");
  }, 120_000);

  it("docsCliExitTableNamesTheParkedStatus", () => {
    const doc = readFileSync(join(REPO, "docs/cli.md"), "utf8");
    const row = doc.split("\n").find((l) => l.startsWith(`| ${ExitCode.Parked} `));
    expect(row).toMatch(/parked/);
  });
});
