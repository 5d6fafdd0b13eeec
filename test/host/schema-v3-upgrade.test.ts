// A data directory written before schema version 4 (hashes as hex text) keeps serving its sessions:
// a host opened on it upgrades the journal at open, the session's next turn chains from the old
// records, and the whole session verifies.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/journal/sqlite/driver.js";
import { afterEach, describe, expect, it } from "vitest";
import { textMessage } from "../../src/controller/events.js";
import { Host } from "../../src/host/index.js";
import { HEAD_ROW_SEQ, SQLITE_SCHEMA_VERSION } from "../../src/journal/sqlite/schema.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function echoTurn(host: Host, session: string, text: string): Promise<readonly string[]> {
  const signal = new AbortController().signal;
  const result = await host.placer.exec({ session, inputs: [textMessage("user", text)], signal });
  return result.outputs;
}

describe("host on a version-3 journal", () => {
  it("aVersion3DataDirectoryKeepsServingItsSessionsAfterTheUpgrade", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-v3-host-"));
    dirs.push(dir);
    const first = await Host.open({ dataDir: dir, defaultHarness: "echo" });
    let session: string;
    try {
      session = (await first.createSession({ harness: "echo" })).uid;
      expect(await echoTurn(first, session, "before")).toEqual(["echo:before"]);
    } finally {
      await first.close();
    }
    // Back to the version-3 form: every hash as lowercase hex text, stamped 3.
    const raw = openSqlite(join(dir, "journal.db"));
    raw.exec(`UPDATE events SET prev_hash = lower(hex(prev_hash)) WHERE typeof(prev_hash) = 'blob';
      UPDATE events SET content_hash = lower(hex(content_hash)) WHERE typeof(content_hash) = 'blob';`);
    raw.pragma("user_version = 3");
    const oldRecords = (
      raw.prepare(`SELECT count(*) AS n FROM events WHERE session = ? AND seq < ${HEAD_ROW_SEQ}`).get(session) as {
        n: number;
      }
    ).n;
    raw.close();

    const second = await Host.open({ dataDir: dir, defaultHarness: "echo" });
    try {
      expect(await echoTurn(second, session, "after")).toEqual(["echo:after"]);
      expect(await second.journal.verify(session)).toMatchObject({ ok: true });
      const records = await second.journal.readRange(session);
      expect(records.length).toBeGreaterThan(oldRecords);
      expect(records[oldRecords]?.prevHash).toBe(records[oldRecords - 1]?.contentHash);
    } finally {
      await second.close();
    }
    const check = openSqlite(join(dir, "journal.db"), { readonly: true });
    expect(check.pragma("user_version", { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    check.close();
  });
});
