// Cross-language check: an independent Python (stdlib-only) verifier recomputes every hash of a
// realistic export, so the chain format does not depend on this implementation's JSON machinery.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportJsonl } from "../../src/journal/transfer/export.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { writeMultiTurn } from "./session-fixture.js";

function runVerifier(file: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync("python3", ["test/verify_chain.py", file], { encoding: "utf8" });
  if (run.error) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("independent Python verifier", () => {
  let dir: string;
  let file: string;
  let childFile: string;
  let count: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hh-pyverify-"));
    const journal = SqliteJournal.open(join(dir, "journal.db"));
    count = await writeMultiTurn(journal, "s-py");
    await journal.fork("s-py", "s-py-child", 4, { uid: "s-py-child", project: "default", harness: "chat" });
    let text = "";
    for await (const line of exportJsonl(journal, "s-py")) text += `${line}\n`;
    let childText = "";
    for await (const line of exportJsonl(journal, "s-py-child")) childText += `${line}\n`;
    await journal.close();
    file = join(dir, "s-py.jsonl");
    writeFileSync(file, text, "utf8");
    childFile = join(dir, "s-py-child.jsonl");
    writeFileSync(childFile, childText, "utf8");
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("accepts an intact export", () => {
    const run = runVerifier(file);
    expect(run, run.stderr).toMatchObject({ status: 0 });
    expect(run.stdout.trim()).toBe(`ok ${count} records`);
  });

  it("accepts a fork child's export on its own (shared prefix plus the FORK marker)", () => {
    const run = runVerifier(childFile);
    expect(run, run.stderr).toMatchObject({ status: 0 });
    expect(run.stdout.trim()).toBe("ok 5 records");
  });

  it("rejects an export whose Struct float was edited, naming the seq", () => {
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines[3]).toContain('"ratio":1.5');
    lines[3] = (lines[3] ?? "").replace('"ratio":1.5', '"ratio":1.25');
    const tampered = join(dir, "tampered.jsonl");
    writeFileSync(tampered, lines.join("\n"), "utf8");
    const run = runVerifier(tampered);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^seq 4: content_hash mismatch/);
  });

  it("rejects an export whose unicode text was edited, naming the seq", () => {
    const lines = readFileSync(file, "utf8").split("\n");
    lines[1] = (lines[1] ?? "").replace("😀", "😁");
    const tampered = join(dir, "tampered-text.jsonl");
    writeFileSync(tampered, lines.join("\n"), "utf8");
    const run = runVerifier(tampered);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^seq 2: /);
  });

  it("rejects a dropped record as a gap", () => {
    const lines = readFileSync(file, "utf8").split("\n");
    lines.splice(5, 1);
    const gapped = join(dir, "gapped.jsonl");
    writeFileSync(gapped, lines.join("\n"), "utf8");
    const run = runVerifier(gapped);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^seq 6: /);
  });
});
