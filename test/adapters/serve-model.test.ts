// `serve --model module:FILE` (docs/integrations.md): each adapter's docs example runs under the real
// `serve` command with the model module beside it as the host's model — the AI SDK's mock model for the
// AI SDK agent, the scripted provider for the Agents SDK graph — and a turn through the CLI answers as
// the same agent does in-process. A model module that is missing or exports no provider is one line
// naming it and nothing is served.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../docs/sh-script.js";
import { type ServeProcess, startLoopbackServe } from "../reliability/serve-process.js";
import { hh, REPO } from "../cli/bin.js";

const dirs: string[] = [];
const serves: ServeProcess[] = [];
afterAll(async () => {
  for (const s of serves.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const example = (file: string) => join(REPO, "docs/examples", file);

describe.each([
  ["ai-sdk-agent.ts", "ai-sdk-model.ts", /^result: .*"city":"Oslo","tempC":14/m],
  ["openai-agents-agent.ts", "openai-agents-model.ts", /^result: \{"city":"Oslo","tempC":14\}$/m],
])("serve --harness agent=local:%s --model module:%s", (agent, model, answer) => {
  it("aTurnThroughServeAnswersWithTheModelModulesModel", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-serve-model-"));
    dirs.push(dir);
    const { serve, server } = await startLoopbackServe(join(dir, "data"), {
      "--harness": `agent=local:${example(agent)}`,
      "--model": `module:${example(model)}`,
    });
    serves.push(serve);
    const res = await hh(dir, "exec", "--server", server, "--harness", "agent", "--input", "weather in Oslo?");
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(answer);
  }, 300_000);
});

describe("serve --model module:FILE with a bad module", () => {
  it.each([
    ["missing", "module:/nonexistent/model.ts", 3, /model module \/nonexistent\/model\.ts not found/],
    ["no provider", `module:${example("shout.ts")}`, 2, /must be a model provider/],
  ])(
    "%s: refusedNamingTheModuleBeforeAnythingIsServed",
    async (_what, flag, code, message) => {
      const dir = mkdtempSync(join(tmpdir(), "hh-serve-model-bad-"));
      dirs.push(dir);
      const port = await freePort();
      const res = await hh(
        dir,
        "serve",
        "--data",
        join(dir, "data"),
        "--addr",
        `127.0.0.1:${port}`,
        "--registry-addr",
        "off",
        "--http-addr",
        "off",
        "--model",
        flag,
      );
      expect(res.code).toBe(code);
      expect(res.stderr).toMatch(message);
    },
    120_000,
  );
});
