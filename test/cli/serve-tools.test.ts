// `serve --tools MODULE` (docs/harness-authoring.md, "Your own host-mediated tools"), through the real
// command: a module's tool runs behind the host's approval gate exactly once per idempotency key, and
// the operator's policy still refuses an ungated call; a bad module — missing, throwing on import,
// without a default export, the wrong shape, a schema that is not an object — is one line naming the
// module, the exit status of the one table, and nothing is opened or served.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServeProcess, startLoopbackServe } from "../reliability/serve-process.js";
import { hh, REPO } from "./bin.js";

const dir = mkdtempSync(join(tmpdir(), "hh-serve-tools-"));
const fixtures = join(REPO, "test/fixtures/tools");
const deskLog = join(dir, "desk.jsonl");
let serve: ServeProcess | undefined;
let server = "";

beforeAll(async () => {
  ({ serve, server } = await startLoopbackServe(
    join(dir, "data"),
    { "--harness": `desk=local:${join(fixtures, "desk-harness.ts")}`, "--tools": join(fixtures, "desk-tools.ts") },
    { ...process.env, DESK_LOG: deskLog },
  ));
}, 300_000);

afterAll(async () => {
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function runs(): string[] {
  return existsSync(deskLog) ? readFileSync(deskLog, "utf8").split("\n").filter(Boolean) : [];
}

describe("serve --tools", () => {
  it("aModulesToolRunsBehindTheApprovalGateOncePerIdempotencyKey", async () => {
    const created = await hh(dir, "create", "--server", server, "--harness", "desk");
    expect(created.code, created.stderr).toBe(0);
    const s = created.stdout.trim();
    const parked = await hh(dir, "exec", "--server", server, "--session", s, "--input", "room-4");
    expect(parked.stderr + parked.stdout).toMatch(/awaiting approval: .* tool_call=b1/);
    expect(runs()).toEqual([]);
    const approved = await hh(dir, "approve", "--server", server, "--session", s);
    expect(approved.code, approved.stderr).toBe(0);
    const resumed = await hh(dir, "resume", "--server", server, "--session", s);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('{"booked":"room-4"}');
    // Nothing left to do: the tool ran once.
    await hh(dir, "resume", "--server", server, "--session", s);
    expect(runs().map((l) => JSON.parse(l) as { room: string })).toEqual([
      { room: "room-4", key: expect.stringMatching(/\/b1$/) },
    ]);
  }, 300_000);

  it("aModulesToolCalledWithoutAGateIsRefusedByTheOperatorsPolicy", async () => {
    const res = await hh(dir, "exec", "--server", server, "--harness", "desk", "--input", "unattended");
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/tool "desk.book" needs an operator's approval on this host/);
    expect(runs().some((l) => l.includes('"unattended"'))).toBe(false);
  }, 300_000);
});

describe("serve --tools with a bad module", () => {
  const cases: [string, string, number, RegExp][] = [
    ["missing", join(fixtures, "no-such-tools.mjs"), 3, /tools module .*no-such-tools\.mjs not found/],
    [
      "throws on import",
      join(fixtures, "throws-on-import.mjs"),
      2,
      /tools module .*throws-on-import\.mjs failed to load: the tools database is not configured/,
    ],
    ["no default export", join(fixtures, "no-default.mjs"), 2, /tools module .*no-default\.mjs has no default export/],
    ["wrong shape", join(fixtures, "wrong-shape.mjs"), 2, /tools module .*wrong-shape\.mjs: tool desk\.book: .*run/s],
    [
      "bad schema",
      join(fixtures, "bad-schema.mjs"),
      2,
      /tools module .*bad-schema\.mjs: tool desk\.book: .*args must be a zod 4 object schema/s,
    ],
  ];
  for (const [what, module, exit, message] of cases) {
    it(`aToolsModuleThatIsBadIsRefusedNamingItAndNothingIsServed: ${what}`, async () => {
      const data = join(dir, `never-${exit}-${what.replace(/\W/g, "")}`);
      const res = await hh(dir, "serve", "--tools", module, "--data", data, "--addr", "127.0.0.1:0");
      expect(res.code, res.stderr).toBe(exit);
      expect(res.stderr).toMatch(message);
      expect(res.stderr).not.toContain("listening");
      expect(existsSync(data)).toBe(false);
    }, 120_000);
  }
});
