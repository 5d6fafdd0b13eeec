// docs/migrating-from-go.md "Bring your sessions": the commands run as written (real npx in a project
// that installed the packed tarball; test/docs/npx-doc.ts says what is changed: ports, repository paths) against a Go-layout journal built from the reference's fixtures (see
// test/journal/go-fixture.ts): import, verify, replay with zero model calls, a new turn, export. And
// "Every row, run": each row of the command table has its `# row` example, and the script runs as written
// against one served host, a harness node and the fake model (ports replaced by free ones).
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonlLine } from "../../src/journal/transfer/export.js";
import { GO_HELLO_INPUT_HASH, goEchoTurn, writeGoJournal } from "../journal/go-fixture.js";
import { projectWorkdir } from "../package/shared.js";
import { runDoc } from "./npx-doc.js";
import { shBlocks } from "./sh-script.js";

const repo = resolve(import.meta.dirname, "../..");
let dir: string;
beforeAll(async () => {
  dir = await projectWorkdir("migrate-doc");
}, 600_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("docs/migrating-from-go.md", () => {
  it("the import walkthrough runs as written: verify, zero-call replay, a new turn, export of the Go records", async () => {
    const uid = "sess-0123456789abcdef01234567";
    const records = goEchoTurn(GO_HELLO_INPUT_HASH);
    writeGoJournal(join(dir, "agentsessions.db"), "v2", [{ uid, records, row: { fence: 1, createdAtNs: 1n } }]);
    const doc = readFileSync(join(repo, "docs/migrating-from-go.md"), "utf8");
    const out = await runDoc(shBlocks(doc, "Bring your sessions").join("\n"), dir);
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
    let out: string;
    try {
      out = await runDoc(script, rowsDir);
    } finally {
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
