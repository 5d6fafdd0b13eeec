// The Python SDK's stateless examples pass the conformance suite on an address (docs/conformance.md,
// docs/python.md): each example is started as its own process (`python3 EXAMPLE --listen unix://…`,
// ready line awaited) and the suite's host drives it over gRPC on the remote runtime. The memory
// example (counter.py) is checked on the vm runtime by test/docs/python.test.ts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runConformance } from "../../src/conformance/index.js";
import { type PythonNode, startExample, stop } from "./python-env.js";

let dir = "";
const nodes: PythonNode[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hh-pyconf-"));
});

afterAll(async () => {
  await Promise.all(nodes.map((n) => stop(n.child)));
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
});

describe("Python SDK examples under the conformance suite", () => {
  it.each([
    ["echo.py", "pyecho"],
    ["notes.py", "pynotes"],
  ])(
    "theStatelessExample %s passesEveryStatelessCheckOnItsAddress",
    async (example, id) => {
      const node = await startExample(example, `unix://${join(dir, `${id}.sock`)}`);
      nodes.push(node);
      const report = await runConformance({ harness: node.address });
      const summary = report.checks.map((c) => `${c.id} ${c.status}: ${c.evidence}`).join("\n");
      expect(report.tier, summary).toBe("stateless");
      expect(report.descriptorId).toBe(id);
      expect(report.failed, summary).toBe(0);
      expect(report.checks.filter((c) => c.status === "pass").map((c) => c.id)).toEqual([
        "stateless.describe-valid",
        "stateless.live-turns-chain",
        "stateless.replay-byte-identical",
        "stateless.restart-continues",
        "stateless.historical-fork",
        "stateless.suspend-resume",
        "stateless.model-cut-redrive",
      ]);
    },
    300_000,
  );
});
