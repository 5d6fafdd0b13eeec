// SQLite schema version 4: a record's hashes are stored as 32 bytes when canonical and read back
// exactly as written (src/journal/sqlite/hash.ts). Under test: the stored form, the codec on values
// that are not canonical, tampering with a BLOB hash, and a version-3 file (hashes as hex text) that
// opens at version 4 without a rewrite, verifies, exports the same lines, forks and keeps appending —
// and opens read-only with no upgrade at all.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/journal/sqlite-driver.js";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import { exportJsonl } from "../../src/journal/transfer/export.js";
import { hashColumn } from "../../src/journal/sqlite/hash.js";
import { HEAD_ROW_SEQ, SQLITE_SCHEMA_VERSION } from "../../src/journal/sqlite/schema.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { endEvent, executionStartEvent, inputEvent, outputEvent } from "./events.js";
import { created } from "./sessions.js";

const tempDirs: string[] = [];
function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "hh-hash-"));
  tempDirs.push(dir);
  return join(dir, "journal.db");
}
afterEach(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function lines(journal: Journal, session: string): Promise<string[]> {
  const out: string[] = [];
  for await (const line of exportJsonl(journal, session)) out.push(line);
  return out;
}

function version(file: string): number {
  const db = openSqlite(file, { readonly: true });
  try {
    return Number(db.pragma("user_version", { simple: true }));
  } finally {
    db.close();
  }
}

/**
 * A version-3 file as that build left it: this build's rows with every hash as lowercase hex text,
 * stamped 3. Returns the export lines of session "old" (two turns, one pinned).
 */
async function writeVersion3(file: string): Promise<string[]> {
  const writer = await created(SqliteJournal.open(file), "old");
  await writer.appendBatch("old", 0, 0, [
    executionStartEvent("ver", "1", "x1"),
    inputEvent("one", "x1"),
    outputEvent("two", "x1"),
    endEvent("x1"),
  ]);
  await writer.appendBatch("old", 4, 0, [inputEvent("three", "x2"), endEvent("x2")]);
  const exported = await lines(writer, "old");
  await writer.close();
  const raw = openSqlite(file);
  raw.exec(`UPDATE events SET prev_hash = lower(hex(prev_hash)) WHERE typeof(prev_hash) = 'blob';
    UPDATE events SET content_hash = lower(hex(content_hash)) WHERE typeof(content_hash) = 'blob';`);
  raw.pragma("user_version = 3");
  const forms = raw
    .prepare(`SELECT DISTINCT typeof(content_hash) AS t FROM events WHERE seq < ${HEAD_ROW_SEQ}`)
    .all() as { t: string }[];
  raw.close();
  expect(forms).toEqual([{ t: "text" }]);
  return exported;
}

describe("sqlite journal: hashes stored as 32 bytes (schema version 4)", () => {
  it("aCanonicalHashIsStoredAsItsThirtyTwoBytes", async () => {
    const file = tempFile();
    const journal = await created(SqliteJournal.open(file), "s");
    try {
      await journal.appendBatch("s", 0, 0, [inputEvent("a"), outputEvent("b")]);
      const raw = openSqlite(file, { readonly: true });
      const rows = raw
        .prepare(
          `SELECT seq, typeof(prev_hash) AS pt, length(prev_hash) AS pl, typeof(content_hash) AS ct,
             length(content_hash) AS cl FROM events WHERE session = 's' AND seq < ${HEAD_ROW_SEQ} ORDER BY seq`,
        )
        .all();
      raw.close();
      // The genesis link "" stays an empty string; every minted hash is a 32-byte BLOB.
      expect(rows).toEqual([
        { seq: 1, pt: "text", pl: 0, ct: "blob", cl: 32 },
        { seq: 2, pt: "blob", pl: 32, ct: "blob", cl: 32 },
      ]);
      const [first, second] = await journal.readRange("s");
      expect(first?.contentHash).toMatch(/^[0-9a-f]{64}$/);
      expect(second?.prevHash).toBe(first?.contentHash);
      expect(await journal.verify("s")).toMatchObject({ ok: true, records: 2 });
    } finally {
      await journal.close();
    }
  });

  it("aHashThatIsNotCanonicalIsStoredAndReadBackAsWritten", async () => {
    const canonical = "0123456789abcdef".repeat(4);
    expect(hashColumn(canonical)).toEqual(Buffer.from(canonical, "hex"));
    const others = ["", "deadbeef", canonical.toUpperCase(), `${canonical}0`, `g${canonical.slice(1)}`];
    for (const other of others) expect(hashColumn(other)).toBe(other);
    // Whatever a row holds — text of any shape, a BLOB of any length (only raw SQL writes those) —
    // the journal reads it back as that text, or as the BLOB's lowercase hex.
    const file = tempFile();
    const journal = await created(SqliteJournal.open(file), "s");
    try {
      await journal.appendBatch(
        "s",
        0,
        0,
        others.map((t) => inputEvent(t)),
      );
      const raw = openSqlite(file);
      const set = raw.prepare("UPDATE events SET prev_hash = ?, content_hash = ? WHERE session = 's' AND seq = ?");
      for (const [i, other] of others.entries()) set.run(other, hashColumn(other), i + 1);
      set.run(Buffer.from([0xde, 0xad]), Buffer.from(canonical, "hex"), others.length);
      raw.close();
      const read = await journal.readRange("s");
      expect(read.map((r) => [r.prevHash, r.contentHash])).toEqual([
        ...others.slice(0, -1).map((o) => [o, o]),
        ["dead", canonical],
      ]);
    } finally {
      await journal.close();
    }
  });

  it("aTamperedBlobHashIsDetectedAtItsSeq", async () => {
    const file = tempFile();
    const journal = await created(SqliteJournal.open(file), "s");
    try {
      await journal.appendBatch("s", 0, 0, [inputEvent("a"), outputEvent("b"), endEvent()]);
      const raw = openSqlite(file);
      raw.prepare("UPDATE events SET content_hash = ? WHERE session = 's' AND seq = 2").run(Buffer.alloc(32, 0xab));
      raw.close();
      expect(await journal.verify("s")).toMatchObject({ ok: false, kind: "tampered", seq: 2 });
    } finally {
      await journal.close();
    }
  });

  it("aVersion3DatabaseOpensAtVersion4WithItsRecordsUnchangedVerifiesForksAndKeepsAppending", async () => {
    const file = tempFile();
    const exported = await writeVersion3(file);
    const journal = SqliteJournal.open(file);
    try {
      expect(version(file)).toBe(SQLITE_SCHEMA_VERSION);
      expect(await lines(journal, "old")).toEqual(exported);
      expect(await journal.verify("old")).toMatchObject({ ok: true, records: 6 });
      expect((await journal.getSession("old"))?.pin).toMatchObject({ harness: "ver", version: "1" });
      // Appends chain from the text-hash head; the new rows are BLOBs, the old ones stay text.
      const head = await journal.head("old");
      const [next] = await journal.appendBatch("old", 6, 0, [inputEvent("four", "x3")]);
      expect(next?.prevHash).toBe(head.hash);
      expect(await journal.verify("old")).toMatchObject({ ok: true, records: 7 });
      expect((await lines(journal, "old")).slice(0, 6)).toEqual(exported);
      // A fork at a record written as text chains its marker from that record's hash.
      await journal.fork("old", "child", 4, {
        uid: "child",
        project: "default",
        harness: "ver",
      });
      expect(await journal.verify("child")).toMatchObject({ ok: true, records: 5 });
      expect((await lines(journal, "child")).slice(0, 4)).toEqual(exported.slice(0, 4));
    } finally {
      await journal.close();
    }
    const raw = openSqlite(file, { readonly: true });
    const forms = raw
      .prepare(
        `SELECT seq, typeof(content_hash) AS t FROM events WHERE session = 'old' AND seq < ${HEAD_ROW_SEQ} ORDER BY seq`,
      )
      .all() as { seq: number; t: string }[];
    raw.close();
    expect(forms.map((r) => r.t)).toEqual(["text", "text", "text", "text", "text", "text", "blob"]);
  });

  it("aVersion3DatabaseOpensReadOnlyWithoutAnUpgrade", async () => {
    const file = tempFile();
    const exported = await writeVersion3(file);
    const journal = SqliteJournal.open(file, { readOnly: true });
    try {
      expect(await journal.verify("old")).toMatchObject({ ok: true, records: 6 });
      expect(await lines(journal, "old")).toEqual(exported);
    } finally {
      await journal.close();
    }
    expect(version(file)).toBe(3);
  });

  it("aVersion2DatabaseIsRefusedByAReadOnlyOpenAndNamesTheUpgrade", async () => {
    const file = tempFile();
    await writeVersion3(file);
    const raw = openSqlite(file);
    raw.pragma("user_version = 2");
    raw.close();
    let err: unknown;
    try {
      SqliteJournal.open(file, { readOnly: true });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HostError);
    expect((err as HostError).code).toBe(ErrorCode.FailedPrecondition);
    expect((err as HostError).message).toContain(`must be upgraded to ${SQLITE_SCHEMA_VERSION}`);
  });
});
