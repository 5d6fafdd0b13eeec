// The SQLite journal: the shared contract, plus what only a file-backed store can show — raw-SQL
// tampering is detected and classed, the schema stamp is enforced, data survives reopen, and two
// processes appending to one file keep a dense, verifiable chain.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { openSqlite } from "../../src/journal/sqlite-driver.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import { openJournal } from "../../src/journal/index.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import { toBinary } from "@bufbuild/protobuf";
import { EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { chainEvents } from "../../src/journal/chain.js";
import { HEAD_ROW_SEQ, SCHEMA_V1, SQLITE_SCHEMA_VERSION } from "../../src/journal/sqlite/schema.js";
import { knownEventBytes } from "../../src/wire/event-bytes.js";
import { journalConformance } from "./conformance.js";
import { created } from "./sessions.js";
import { endEvent, inputEvent, outputEvent } from "./events.js";
import { expectPinsBackfilled, writePinnedSessions } from "./pin-backfill.js";

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hh-journal-"));
  tempDirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

journalConformance("sqlite", async () => {
  const journal = SqliteJournal.open(join(tempDir(), "journal.db"));
  return { journal, cleanup: () => journal.close() };
});

/**
 * A journal file seeded by `seed` before each test, with a second raw connection to tamper through;
 * both are closed after each test. Read the fields inside tests (they are replaced per test).
 */
function seededJournal(seed: (journal: SqliteJournal) => Promise<unknown>): {
  journal: SqliteJournal;
  raw: Database.Database;
} {
  const ctx = {} as { journal: SqliteJournal; raw: Database.Database };
  beforeEach(async () => {
    const file = join(tempDir(), "journal.db");
    ctx.journal = SqliteJournal.open(file);
    await seed(ctx.journal);
    ctx.raw = openSqlite(file);
  });
  afterEach(async () => {
    ctx.raw.close();
    await ctx.journal.close();
  });
  return ctx;
}

describe("sqlite journal: tamper detection by raw SQL", () => {
  const ctx = seededJournal(async (j) =>
    (await created(j, "s")).appendBatch("s", 0, 0, [
      inputEvent("alpha"),
      outputEvent("bravo"),
      inputEvent("charlie"),
      outputEvent("delta"),
      endEvent(),
    ]),
  );

  it("a changed byte inside an event blob is tampered at that seq", async () => {
    const row = ctx.raw.prepare("SELECT event FROM events WHERE session = 's' AND seq = 2").get() as { event: Buffer };
    const at = row.event.indexOf("bravo");
    expect(at).toBeGreaterThan(0);
    const blob = Buffer.from(row.event);
    blob[at] = "B".charCodeAt(0);
    ctx.raw.prepare("UPDATE events SET event = ? WHERE session = 's' AND seq = 2").run(blob);
    const result = await ctx.journal.verify("s");
    expect(result).toMatchObject({ ok: false, kind: "tampered", seq: 2 });
    expect(result.ok ? "" : result.message).toContain("seq 2");
  });

  it("a changed prev_hash is tampered at that seq", async () => {
    ctx.raw.prepare("UPDATE events SET prev_hash = ? WHERE session = 's' AND seq = 3").run("0".repeat(64));
    expect(await ctx.journal.verify("s")).toMatchObject({ ok: false, kind: "tampered", seq: 3 });
  });

  it("a changed content_hash is tampered at that seq", async () => {
    ctx.raw.prepare("UPDATE events SET content_hash = 'deadbeef' WHERE session = 's' AND seq = 4").run();
    expect(await ctx.journal.verify("s")).toMatchObject({ ok: false, kind: "tampered", seq: 4 });
  });

  it("a deleted middle row is a gap naming the missing seq", async () => {
    ctx.raw.prepare("DELETE FROM events WHERE session = 's' AND seq = 2").run();
    const result = await ctx.journal.verify("s");
    expect(result).toMatchObject({ ok: false, kind: "gap", seq: 2 });
    expect(result.ok ? "" : result.message).toContain("seq 2");
  });

  it("a deleted last row is truncation naming the missing seq", async () => {
    ctx.raw.prepare("DELETE FROM events WHERE session = 's' AND seq = 5").run();
    const result = await ctx.journal.verify("s");
    expect(result).toMatchObject({ ok: false, kind: "truncated", seq: 5 });
    expect(result.ok ? "" : result.message).toContain("seq 5");
  });

  it("a garbage blob is undecodable, a class apart from tampering", async () => {
    ctx.raw
      .prepare("UPDATE events SET event = ? WHERE session = 's' AND seq = 3")
      .run(Buffer.from([0xff, 0xff, 0xff, 0xff]));
    const result = await ctx.journal.verify("s");
    expect(result).toMatchObject({ ok: false, kind: "undecodable", seq: 3 });
    const reading = ctx.journal.readRange("s");
    await expect(reading).rejects.toBeInstanceOf(HostError);
    await expect(reading).rejects.toMatchObject({ code: ErrorCode.DataLoss });
    await expect(ctx.journal.readEvents("s")).rejects.toMatchObject({
      code: ErrorCode.DataLoss,
      message: expect.stringContaining("seq 3"),
    });
  });

  it("a row inserted past the head is tampered", async () => {
    ctx.raw
      .prepare(
        "INSERT INTO events (session, seq, prev_hash, content_hash, fence, event) SELECT session, 6, content_hash, content_hash, fence, event FROM events WHERE session = 's' AND seq = 5",
      )
      .run();
    expect(await ctx.journal.verify("s")).toMatchObject({ ok: false, kind: "tampered", seq: 6 });
  });
});

describe("sqlite journal: the head row beside the newest record (schema 2)", () => {
  // Three appends: the session row's anchor is the first append's head (seq 1), the head row seq 5.
  const ctx = seededJournal(async (j) => {
    await created(j, "h");
    await j.append("h", 0, 0, inputEvent("alpha"));
    await j.appendBatch("h", 1, 0, [outputEvent("bravo"), inputEvent("charlie")]);
    await j.appendBatch("h", 3, 0, [outputEvent("delta"), endEvent()]);
  });

  it("after a session's first append, appends write no session row: the head row moves, the anchor stays", async () => {
    const anchor = ctx.raw.prepare("SELECT last_seq FROM sessions WHERE uid = 'h'").get() as { last_seq: number };
    const headRow = ctx.raw
      .prepare(`SELECT head_seq, head_hash FROM events WHERE session = 'h' AND seq = ${HEAD_ROW_SEQ}`)
      .get() as { head_seq: number; head_hash: string };
    const head = await ctx.journal.head("h");
    expect(anchor.last_seq).toBe(1);
    expect(head.seq).toBe(5);
    expect(headRow).toEqual({ head_seq: 5, head_hash: head.hash });
    expect((await ctx.journal.getSession("h"))?.lastSeq).toBe(5);
    expect((await ctx.journal.readRange("h")).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(await ctx.journal.verify("h")).toMatchObject({ ok: true });
  });

  it("a tail deleted together with the head row is still detected: the records outrun the anchor", async () => {
    ctx.raw.prepare("DELETE FROM events WHERE session = 'h' AND seq > 3").run();
    const result = await ctx.journal.verify("h");
    expect(result).toMatchObject({ ok: false, kind: "tampered" });
    expect(result.ok ? "" : result.message).toContain("beyond the recorded head seq 1");
  });

  it("a session whose every events row was deleted reads as truncated, not as empty", async () => {
    ctx.raw.prepare("DELETE FROM events WHERE session = 'h'").run();
    expect(await ctx.journal.verify("h")).toMatchObject({ ok: false, kind: "truncated", seq: 1 });
  });

  it("aVersion2DatabaseIsBackfilledWithEveryPinAtOpen", async () => {
    // A version-2 file: this build's schema without the pin columns, stamped 2, with pinned sessions.
    const file = join(tempDir(), "v2.db");
    const writer = SqliteJournal.open(file);
    await writePinnedSessions(writer);
    await writer.close();
    const old = openSqlite(file);
    old.exec("DROP INDEX sessions_pin");
    for (const c of ["pin_seq", "pin_harness", "pin_version", "pin_digest"])
      old.exec(`ALTER TABLE sessions DROP COLUMN ${c}`);
    old.pragma("user_version = 2");
    old.close();

    const upgraded = SqliteJournal.open(file);
    try {
      await expectPinsBackfilled(upgraded);
    } finally {
      await upgraded.close();
    }
  });

  it("a version-1 database opens at the current version with its heads intact, verifies and keeps appending", async () => {
    const v1 = join(tempDir(), "v1.db");
    const old = openSqlite(v1);
    old.exec(SCHEMA_V1);
    old.pragma("user_version = 1");
    const records = chainEvents({ seq: 0, hash: "" }, 1, [inputEvent("one"), outputEvent("two")]);
    const insert = old.prepare(
      "INSERT INTO events (session, seq, prev_hash, content_hash, fence, event) VALUES (?, ?, ?, ?, ?, ?)",
    );
    for (const r of records)
      insert.run("old", r.seq, r.prevHash, r.contentHash, r.fence, toBinary(EventSchema, r.event));
    old
      .prepare(
        "INSERT INTO sessions (uid, created_at_ms, updated_at_ms, fence, last_seq, last_hash, compute_state) VALUES ('old', 1, 1, 1, 2, ?, 'NONE')",
      )
      .run(records[1]!.contentHash);
    old.close();

    const upgraded = SqliteJournal.open(v1);
    try {
      expect(await upgraded.head("old")).toEqual({ seq: 2, hash: records[1]!.contentHash });
      expect(await upgraded.verify("old")).toMatchObject({ ok: true });
      await upgraded.append("old", 2, 1, endEvent());
      expect((await upgraded.head("old")).seq).toBe(3);
      expect((await upgraded.getSession("old"))?.lastSeq).toBe(3);
      expect(await upgraded.verify("old")).toMatchObject({ ok: true });
    } finally {
      await upgraded.close();
    }
    const check = openSqlite(v1);
    expect(check.pragma("user_version", { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    check.close();
  });
});

describe("sqlite journal: file lifecycle", () => {
  it("stamps the schema version and refuses a newer one", async () => {
    const file = join(tempDir(), "journal.db");
    const journal = SqliteJournal.open(file);
    await journal.close();
    const raw = openSqlite(file);
    expect(raw.pragma("user_version", { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    raw.pragma("user_version = 7");
    raw.close();
    let err: unknown;
    try {
      SqliteJournal.open(file);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HostError);
    expect((err as HostError).code).toBe(ErrorCode.FailedPrecondition);
    expect((err as HostError).message).toBe(
      `journal schema version 7 is newer than this build supports (${SQLITE_SCHEMA_VERSION})`,
    );
  });

  it("keeps records, sessions and registrations across close and reopen", async () => {
    const file = join(tempDir(), "nested", "dir", "journal.db");
    const first = await openJournal(`sqlite:${file}`);
    expect(first.kind).toBe("sqlite");
    await created(first, "s");
    await first.newFence("s");
    const records = await first.appendBatch("s", 0, 1, [inputEvent("a"), outputEvent("b")]);
    await first.putRegistration({
      name: "echo",
      uid: "harness-1",
      spec: "{}",
      specDigest: "sha256:x",
      state: "active",
      retireReason: "",
      retiredAtMs: 0,
      createdAtMs: 1,
      updatedAtMs: 1,
    });
    await first.close();
    const second = await openJournal(file);
    try {
      expect((await second.readRange("s")).map((r) => r.contentHash)).toEqual(records.map((r) => r.contentHash));
      expect(await second.currentFence("s")).toBe(1);
      expect(await second.verify("s")).toMatchObject({ ok: true, records: 2 });
      expect((await second.getSession("s"))?.computeState).toBe("LIVE");
      expect((await second.getRegistration("echo"))?.uid).toBe("harness-1");
      const next = await second.append("s", 2, 1, endEvent());
      expect(next.prevHash).toBe(records[1]?.contentHash);
    } finally {
      await second.close();
    }
  });

  it("openJournal maps memory: to the in-memory backend", async () => {
    const journal = await openJournal("memory:");
    expect(journal.kind).toBe("memory");
    await journal.close();
  });
});

describe("sqlite journal: two processes on one file", () => {
  interface Writer {
    ready: Promise<void>;
    done: Promise<{ code: number | null; out: string; err: string }>;
    go(): void;
  }

  function startWriter(file: string, session: string, count: number, id: string): Writer {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "test/journal/fixtures/writer.ts", file, session, String(count), id],
      {
        cwd: process.cwd(),
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    let out = "";
    let err = "";
    let markReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("ready\n")) markReady();
    });
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const done = new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code) => {
        markReady();
        resolve({ code, out, err });
      });
    });
    return { ready, done, go: () => child.stdin.end("go\n") };
  }

  it("interleaves appends with CAS retry into one dense, verifiable chain", async () => {
    const file = join(tempDir(), "shared.db");
    const perWriter = 50;
    const creator = SqliteJournal.open(file);
    await created(creator, "shared");
    await creator.close();
    const writers = [startWriter(file, "shared", perWriter, "wa"), startWriter(file, "shared", perWriter, "wb")];
    await Promise.all(writers.map((w) => w.ready));
    for (const w of writers) w.go();
    const results = await Promise.all(writers.map((w) => w.done));
    for (const r of results) expect(r, r.err).toMatchObject({ code: 0 });
    const journal = SqliteJournal.open(file);
    try {
      const records = await journal.readRange("shared");
      expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 2 * perWriter }, (_, i) => i + 1));
      const byWriter = (id: string) => records.filter((r) => r.event.executionId === id).length;
      expect([byWriter("wa"), byWriter("wb")]).toEqual([perWriter, perWriter]);
      expect(await journal.verify("shared")).toMatchObject({ ok: true, records: 2 * perWriter });
    } finally {
      await journal.close();
    }
  });
});

describe("sqlite journal: list indexes", () => {
  const LIST_INDEXES = ["sessions_parent_created", "sessions_project_harness_created"];
  const indexesOf = (db: Database.Database): string[] =>
    (
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name IN (?, ?) ORDER BY name")
        .all(...LIST_INDEXES) as { name: string }[]
    ).map((r) => r.name);

  it("anExistingDatabaseGetsTheListIndexesOnItsFirstOpen", async () => {
    const file = join(tempDir(), "journal.db");
    const first = SqliteJournal.open(file);
    await first.createSession({ uid: "p", project: "default", harness: "echo" });
    await first.close();
    const raw = openSqlite(file);
    expect(indexesOf(raw)).toEqual(LIST_INDEXES);
    // A database from before the indexes existed (same schema version, no index).
    for (const name of LIST_INDEXES) raw.exec(`DROP INDEX ${name}`);
    expect(indexesOf(raw)).toEqual([]);
    raw.close();
    const reopened = SqliteJournal.open(file);
    expect((await reopened.getSession("p"))?.harness).toBe("echo");
    await reopened.close();
    const check = openSqlite(file);
    expect(indexesOf(check)).toEqual(LIST_INDEXES);
    check.close();
  });

  it("forkChildrenLookupUsesTheParentIndex", async () => {
    const file = join(tempDir(), "journal.db");
    const journal = SqliteJournal.open(file);
    await journal.close();
    const raw = openSqlite(file);
    const plan = raw
      .prepare(
        "EXPLAIN QUERY PLAN SELECT s.uid FROM sessions s WHERE s.project = ? AND s.parent_uid = ? ORDER BY s.created_at_ms DESC, s.uid ASC LIMIT 101",
      )
      .all("default", "parent") as { detail: string }[];
    raw.close();
    expect(plan.map((r) => r.detail).join("\n")).toMatch(/USING INDEX sessions_parent_created/);
  });
});

describe("sqlite journal: reads that fill the host caches", () => {
  it("readRangeRecordsEachEventsStoredSize", async () => {
    const journal = SqliteJournal.open(join(tempDir(), "journal.db"));
    try {
      const fence = await (await created(journal, "s1")).newFence("s1");
      await journal.appendBatch("s1", 0, fence, [
        inputEvent("e1", "hello"),
        outputEvent("e1", "world"),
        endEvent("e1"),
      ]);
      const records = await journal.readRange("s1");
      expect(records).toHaveLength(3);
      for (const r of records) expect(knownEventBytes(r.event)).toBe(toBinary(EventSchema, r.event).byteLength);
    } finally {
      journal.close();
    }
  });
});
