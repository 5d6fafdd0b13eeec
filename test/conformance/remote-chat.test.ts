// The suite against a harness node started separately and given by address (stateless and memory),
// and against the chat harness talking to a deterministic OpenAI-compatible endpoint (library API).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { builtinHarnesses } from "../../harnesses/index.js";
import { runConformance, type ProgressEvent } from "../../src/conformance/index.js";
import { serveHarness, type HarnessNode } from "../../src/node/index.js";
import { cli, DeterministicChatEndpoint, type JsonReport } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "hh-conf-remote-"));
const nodes: HarnessNode[] = [];
const endpoint = new DeterministicChatEndpoint();
afterAll(async () => {
  for (const n of nodes) await n.close();
  await endpoint.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("conformance by address and with a real provider protocol", () => {
  it("an echo node started separately passes the stateless tier by address", async () => {
    const node = await serveHarness(builtinHarnesses["echo"]!, { listen: `unix://${join(dir, "echo.sock")}` });
    nodes.push(node);
    const res = await cli("conformance", "--harness", node.address, "--reporter", "json");
    const report = JSON.parse(res.out) as JsonReport;
    expect(report).toMatchObject({ tier: "stateless", failed: 0, skipped: 1, passed: 7 });
    expect(res.code).toBe(0);
  }, 180_000);

  it("a counter node given by address passes the memory tier; checks needing an owned process are skipped with a reason", async () => {
    const node = await serveHarness(builtinHarnesses["counter"]!, { listen: "127.0.0.1:0" });
    nodes.push(node);
    const res = await cli("conformance", "--harness", node.address, "--reporter", "json");
    const report = JSON.parse(res.out) as JsonReport;
    expect(report).toMatchObject({ tier: "memory", failed: 0, passed: 6, skipped: 2 });
    expect(report.checks.filter((c) => c.status === "skip").map((c) => c.id)).toEqual([
      "memory.refused-on-filesystem",
      "memory.restore-after-node-kill",
    ]);
    expect(res.code).toBe(0);
  }, 180_000);

  it("chat passes against a fake OpenAI-compatible endpoint; replay makes zero provider calls", async () => {
    await endpoint.start();
    const events: ProgressEvent[] = [];
    const report = await runConformance({ harness: "chat", model: endpoint.baseUrl }, (e) => events.push(e));
    // chat never compacts: the compaction check is the one skipped.
    expect(report.checks.filter((c) => c.status !== "pass").map((c) => [c.id, c.status])).toEqual([
      ["stateless.compaction-window", "skip"],
    ]);
    expect(report).toMatchObject({ tier: "stateless", passed: 7 });
    expect(events.filter((e) => e.type === "check-end")).toHaveLength(8);
    expect(report.checks.find((c) => c.id === "stateless.historical-fork")?.evidence).toContain(
      '"seen 3 messages, last: turn-2" = control',
    );
    expect(report.checks.find((c) => c.id === "stateless.replay-byte-identical")?.evidence).toContain(
      "model calls during replay: 0",
    );
    expect(endpoint.requests).toBeGreaterThan(0);
  }, 180_000);
});
