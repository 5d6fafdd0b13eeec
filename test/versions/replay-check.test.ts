// The replay check before rollout (docs/versioning.md): new code against a recorded session fixture
// (test/fixtures/replay-check/versioned-v1.jsonl, two turns of versioned harness v1), through the
// library function and through the real bin. A compatible version passes; a changed prompt is caught
// at its first divergent seq with the expected and actual model input.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { recordsFromJsonl, replayCheck } from "../../src/index.js";
import { hh } from "../cli/bin.js";
import { versioned } from "../fixtures/harnesses/versioned.js";

const FIXTURE = resolve(import.meta.dirname, "../fixtures/replay-check/versioned-v1.jsonl");
const HARNESSES = resolve(import.meta.dirname, "../fixtures/harnesses");
const cwd = mkdtempSync(join(tmpdir(), "hh-replay-check-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const recorded = () => [{ label: "versioned-v1.jsonl", records: recordsFromJsonl(readFileSync(FIXTURE, "utf8")) }];

describe("replayCheck (library)", () => {
  it("replayCheckPassesACompatibleVersion", async () => {
    const [r] = await replayCheck(versioned("2", "say "), recorded());
    expect(r).toEqual({ label: "versioned-v1.jsonl", ok: true, turns: 2 });
  });

  it("replayCheckCatchesAChangedPromptInAFixture", async () => {
    const [r] = await replayCheck(versioned("3", "please say "), recorded());
    // seq 1 EXECUTION_START, 2 INPUT, 3 MODEL_CALL: the first model call is where the prompt changed.
    expect(r?.ok).toBe(false);
    expect(r?.divergence?.seq).toBe(3);
    expect(r?.divergence?.expected).toMatch(/^MODEL_CALL input_hash [0-9a-f]{64}$/);
    expect(r?.divergence?.actual).toMatch(/^MODEL_CALL input_hash [0-9a-f]{64}$/);
    expect(r?.divergence?.expected).not.toBe(r?.divergence?.actual);
  });
});

describe("harnesshost replay-check (bin)", () => {
  it("exits 0 for a compatible version and 1 naming the first divergence for a changed prompt", async () => {
    const ok = await hh(cwd, "replay-check", "--harness", join(HARNESSES, "versioned-v2.ts"), "--jsonl", FIXTURE);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`ok ${FIXTURE} 2 turns`);
    const bad = await hh(
      cwd,
      "replay-check",
      "--harness",
      join(HARNESSES, "versioned-v3.ts"),
      "--jsonl",
      FIXTURE,
      FIXTURE,
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`DIVERGED ${FIXTURE} at seq 3: expected MODEL_CALL input_hash`);
    expect(bad.stdout).toContain("0/2 sessions replay identically");
  });
});
