// At most once across a host SIGKILL (docs/integrations.md §4): a host process runs an AI SDK (or an
// OpenAI Agents SDK) agent's turn and is killed after a tool ran (its result kept in the file applied store) and before its
// TOOL_RESULT was journaled; a new host over the same data directory resumes the turn, which completes
// without running the tool again — for a harness-local tool and for a host tool alike.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { eventually } from "../fixtures/eventually.js";
import { countingHost } from "./fixtures/counting-host.js";

const KILL_HOST = fileURLToPath(new URL("./fixtures/kill-host.ts", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  delete process.env["HH_APPLIED_DIR"];
});

const runs = (dir: string, tool: string): number => {
  try {
    return readFileSync(join(dir, `${tool}.runs`), "utf8")
      .split("\n")
      .filter(Boolean).length;
  } catch {
    return 0;
  }
};

describe.each([
  ["ai-sdk", "stamp"],
  ["ai-sdk", "charge"],
  ["openai-agents", "stamp"],
  ["openai-agents", "charge"],
])("%s: a host killed after %s ran and before its receipt", (framework, tool) => {
  const openHost = (dataDir: string) => countingHost(dataDir, framework);
  it("reDrivesWithoutRunningTheToolAgain", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hh-kill-"));
    const appliedDir = mkdtempSync(join(tmpdir(), "hh-applied-"));
    dirs.push(dataDir, appliedDir);
    process.env["HH_APPLIED_DIR"] = appliedDir;
    const first = await openHost(dataDir);
    const { uid: s } = await first.createSession({ harness: "counting" });
    await first.close();

    const child = spawn(process.execPath, ["--import", "tsx", KILL_HOST, dataDir, s, `${tool} Oslo`, framework], {
      env: { ...process.env, HH_APPLIED_DIR: appliedDir, HH_HANG_AFTER_KEEP: "1" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString();
    });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    await eventually("the child kept the tool's result", () => out.includes("KEPT"), 60_000);
    child.kill("SIGKILL");
    await exited;
    expect(out).not.toContain("DONE");
    expect(runs(appliedDir, tool)).toBe(1);

    const host = await openHost(dataDir);
    try {
      const before = (await host.journal.readRange(s)).filter((r) => r.event.kind === EventKind.EVENT_TOOL_RESULT);
      expect(before).toEqual([]);
      const resumed = await host.placer.resume(s, new AbortController().signal);
      expect(resumed.turn?.outputs.at(-1)).toBe(
        `result: {"type":"text","value":"${tool === "stamp" ? "stamped" : "charged"} Oslo"}`,
      );
      expect(runs(appliedDir, tool)).toBe(1);
      const after = (await host.journal.readRange(s)).filter((r) => r.event.kind === EventKind.EVENT_TOOL_RESULT);
      expect(after).toHaveLength(1);
      expect((await host.journal.verify(s)).ok).toBe(true);
    } finally {
      await host.close();
    }
  }, 120_000);
});
