// docs/migrating-from-go.md "Bring your sessions": the commands run as written (the bin pointed at
// this checkout) against a Go-layout journal built from the reference's fixtures (see
// test/journal/go-fixture.ts): import, verify, replay with zero model calls, a new turn, export.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { jsonlLine } from "../../src/journal/export.js";
import { GO_HELLO_INPUT_HASH, goEchoTurn, writeGoJournal } from "../journal/go-fixture.js";
import { bash, shBlocks } from "./sh-script.js";

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
});
