// At most once across a host SIGKILL (docs/integrations.md §4): a host process runs an AI SDK agent's
// turn and is killed after a tool ran (its result kept in the file applied store) and before its
// TOOL_RESULT was journaled; a new host over the same data directory resumes the turn, which completes
// without running the tool again — for a harness-local tool and for a host tool alike.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { aiSdkModelProvider, aiSdkToolExecutor } from "../../src/adapters/ai-sdk/index.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Host } from "../../src/host/host.js";
import { mockModel } from "../../docs/examples/ai-sdk-agent.js";
import { eventually } from "../fixtures/eventually.js";
import { applied, tools } from "./fixtures/counting-agent.js";

const KILL_HOST = fileURLToPath(new URL("./fixtures/kill-host.ts", import.meta.url));
const AGENT = fileURLToPath(new URL("./fixtures/counting-agent.ts", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  delete process.env["HH_APPLIED_DIR"];
});

function openHost(dataDir: string): Promise<Host> {
  return Host.open(
    { dataDir, harnesses: [{ name: "counting", runtime: "local", target: AGENT }], toolsWithoutApproval: ["charge"] },
    { model: aiSdkModelProvider(mockModel()), tools: aiSdkToolExecutor(tools, applied()) },
  );
}

const runs = (dir: string, tool: string): number => {
  try {
    return readFileSync(join(dir, `${tool}.runs`), "utf8")
      .split("\n")
      .filter(Boolean).length;
  } catch {
    return 0;
  }
};

describe.each(["stamp", "charge"])("a host killed after %s ran and before its receipt", (tool) => {
  it("reDrivesWithoutRunningTheToolAgain", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hh-kill-"));
    const appliedDir = mkdtempSync(join(tmpdir(), "hh-applied-"));
    dirs.push(dataDir, appliedDir);
    process.env["HH_APPLIED_DIR"] = appliedDir;
    const first = await openHost(dataDir);
    const { uid: s } = await first.createSession({ harness: "counting" });
    await first.close();

    const child = spawn(process.execPath, ["--import", "tsx", KILL_HOST, dataDir, s, `${tool} Oslo`], {
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
