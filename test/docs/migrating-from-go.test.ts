// docs/migrating-from-go.md "Bring your sessions": the commands run as written (the bin pointed at
// this checkout) against a Go-layout journal built from the reference's fixtures (see
// test/journal/go-fixture.ts): import, verify, replay with zero model calls, a new turn, export. And
// "Every row, run": each row of the command table has its `# row` example, and the script runs as written
// against one served host, a harness node and the fake model (ports replaced by free ones).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { jsonlLine } from "../../src/journal/export.js";
import { GO_HELLO_INPUT_HASH, goEchoTurn, writeGoJournal } from "../journal/go-fixture.js";
import { bash, freePort, shBlocks, stopPidFiles, strictScript } from "./sh-script.js";

const repo = resolve(import.meta.dirname, "../..");
const bin = join(repo, "bin/harnesshost.js");
const dir = mkdtempSync(join(tmpdir(), "hh-migrate-doc-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("docs/migrating-from-go.md", () => {
  it("the import walkthrough runs as written: verify, zero-call replay, a new turn, export of the Go records", async () => {
    const uid = "sess-0123456789abcdef01234567";
    const records = goEchoTurn(GO_HELLO_INPUT_HASH);
    writeGoJournal(join(dir, "agentsessions.db"), "v2", [{ uid, records, row: { fence: 1, createdAtNs: 1n } }]);
    const doc = readFileSync(join(repo, "docs/migrating-from-go.md"), "utf8");
    const script = shBlocks(doc, "Bring your sessions").join("\n").replaceAll("npx harnesshost", `node ${bin}`);
    const out = await bash(`set -euo pipefail\n${script}`, dir, 180_000);
    const lines = out.trim().split("\n");
    expect(lines[0]).toBe(`imported ${uid} 5 records head ${records[4]?.hash}`);
    expect(out).toContain("1/1 sessions intact");
    expect(lines).toContain("echo:hello");
    expect(lines).toContain("echo:again");
    const exported = lines.filter((l) => l.startsWith("{"));
    expect(exported).toHaveLength(10);
    expect(exported.slice(0, 5)).toEqual(
      records.map((r) =>
        jsonlLine({ seq: r.seq, prevHash: r.prevHash, contentHash: r.hash, fence: r.fence, event: r.event }),
      ),
    );
  }, 200_000);

  it("everyTableRowHasARunExample: the row-by-row script runs as written", async () => {
    const rowsDir = join(dir, "rows");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(rowsDir);
    const uid = "sess-0123456789abcdef01234567";
    writeGoJournal(join(rowsDir, "agentsessions.db"), "v2", [
      { uid, records: goEchoTurn(GO_HELLO_INPUT_HASH), row: { fence: 1, createdAtNs: 1n } },
    ]);
    const doc = readFileSync(join(repo, "docs/migrating-from-go.md"), "utf8");
    const section = doc.slice(doc.indexOf("\n## Commands, flags and behaviour"));
    const rows = [...section.matchAll(/^\| ([^|`]+?) +\|/gm)]
      .map((m) => m[1]!)
      .filter((k) => k !== "Go" && !k.startsWith("---"));
    const script = shBlocks(doc, "Commands, flags and behaviour").join("\n");
    const comments = new Set(
      script
        .split("\n")
        .filter((l) => l.startsWith("# "))
        .map((l) => l.slice(2)),
    );
    const tested = ["Exec without inputs after a decision recovers the turn", "divergence: INTERNAL on Exec"];
    expect(rows.length).toBeGreaterThan(20);
    for (const row of rows) if (!tested.includes(row)) expect(comments, `row "${row}" has no example`).toContain(row);
    const [sessions, model, nodePort, ready] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const runnable = script
      .replaceAll("npx tsx test/fixtures/", `${join(repo, "node_modules/.bin/tsx")} ${join(repo, "test/fixtures")}/`)
      .replaceAll("npx harnesshost", `node ${bin}`)
      .replaceAll("127.0.0.1:7233", `127.0.0.1:${sessions}`)
      .replaceAll("127.0.0.1:7240", `127.0.0.1:${model}`)
      .replaceAll("127.0.0.1:7250", `127.0.0.1:${nodePort}`)
      .replaceAll("127.0.0.1:7251", `127.0.0.1:${ready}`);
    let out: string;
    try {
      out = await bash(strictScript(runnable), rowsDir, 400_000);
    } finally {
      stopPidFiles(rowsDir);
      try {
        process.kill(Number(readFileSync(join(rowsDir, "model.pid"), "utf8").trim()), "SIGKILL");
      } catch {
        // stopped by the script
      }
    }
    const lines = out.split("\n");
    expect(lines[0]).toMatch(new RegExp(`^imported ${uid} 5 records head `));
    expect(lines).toContain("ok");
    expect(lines).toContain("ok: hi");
    expect(lines).toContain("ok: hello");
    expect(lines).toContain("seq=2   EVENT_INPUT  user: first");
    expect(lines).toContain("seq=3   EVENT_MODEL_CALL");
    expect(out).toMatch(/^approved .* request_seq=\d+ decision_seq=\d+; run resume to continue the turn$/m);
    expect(out).toMatch(/^denied .*; run resume to continue the turn$/m);
    expect(out).toMatch(/^session sess-\S+ harness=echo last_seq=\d+ compute=/m);
    expect(out).toContain("exit 3");
    expect(out).toContain("exit 7");
  }, 450_000);
});
