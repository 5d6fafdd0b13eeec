// The PostgreSQL journal: the shared contract, plus what only a shared server can show — raw-SQL
// tampering is detected and classed, the schema stamp is enforced and first opens do not race, two
// hosts appending to one session keep a dense chain, the session advisory lock excludes a second host,
// and an export is byte-identical to SQLite's.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ErrorCode, HostError, isHostError } from "../../src/errors/index.js";
import { exportJsonl, verifyJsonl } from "../../src/journal/transfer/export.js";
import { openJournal } from "../../src/journal/index.js";
import { PostgresJournal } from "../../src/journal/postgres/journal.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { journalConformance } from "./conformance.js";
import { PG_SCHEMA_VERSION } from "../../src/journal/postgres/schema.js";
import { deleteSessionIn } from "../../src/journal/postgres/writes.js";
import { endEvent, inputEvent, outputEvent, toolCallEvent } from "./events.js";
import { expectPinsBackfilled, writePinnedSessions } from "./pin-backfill.js";
import { dropSchemas, freshSchema, PG_URL, rawClient } from "./postgres-fixture.js";
import { multiTurnEvents } from "./session-fixture.js";
import { created } from "./sessions.js";

const schemas: string[] = [];
function schema(): string {
  const name = freshSchema();
  schemas.push(name);
  return name;
}
afterAll(async () => {
  await dropSchemas(schemas.splice(0));
});

async function openFresh(name = schema()): Promise<PostgresJournal> {
  return PostgresJournal.open(PG_URL, { schema: name, poolSize: 4 });
}

async function exported(journal: Journal, session: string): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of exportJsonl(journal, session)) lines.push(line);
  return lines;
}

journalConformance("postgres", async () => {
  const name = schema();
  const journal = await openFresh(name);
  return {
    journal,
    cleanup: async () => {
      await journal.close();
      await dropSchemas([name]);
    },
  };
});

describe("postgres journal: tamper detection by raw SQL", () => {
  let journal: PostgresJournal;
  let raw: pg.Client;

  beforeEach(async () => {
    const name = schema();
    journal = await created(await openFresh(name), "s");
    await journal.appendBatch("s", 0, 0, [
      inputEvent("alpha"),
      outputEvent("bravo"),
      inputEvent("charlie"),
      outputEvent("delta"),
      endEvent(),
    ]);
    raw = await rawClient(name);
  });

  afterEach(async () => {
    await raw.end();
    await journal.close();
  });

  it("a changed byte inside an event blob is tampered at that seq", async () => {
    const row = (await raw.query<{ event: Buffer }>("SELECT event FROM events WHERE session = 's' AND seq = 2"))
      .rows[0];
    const at = row?.event.indexOf("bravo") ?? -1;
    expect(at).toBeGreaterThan(0);
    const blob = Buffer.from(row?.event ?? []);
    blob[at] = "B".charCodeAt(0);
    await raw.query("UPDATE events SET event = $1 WHERE session = 's' AND seq = 2", [blob]);
    const result = await journal.verify("s");
    expect(result).toMatchObject({ ok: false, kind: "tampered", seq: 2 });
    expect(result.ok ? "" : result.message).toContain("seq 2");
  });

  it("a deleted last row is truncation naming the missing seq", async () => {
    await raw.query("DELETE FROM events WHERE session = 's' AND seq = 5");
    const result = await journal.verify("s");
    expect(result).toMatchObject({ ok: false, kind: "truncated", seq: 5 });
    expect(result.ok ? "" : result.message).toContain("seq 5");
  });

  it("a deleted middle row is a gap naming the missing seq", async () => {
    await raw.query("DELETE FROM events WHERE session = 's' AND seq = 3");
    const result = await journal.verify("s");
    expect(result).toMatchObject({ ok: false, kind: "gap", seq: 3 });
    expect(result.ok ? "" : result.message).toContain("seq 3");
  });

  it("a garbage blob is undecodable and reading it is DataLoss", async () => {
    await raw.query("UPDATE events SET event = $1 WHERE session = 's' AND seq = 4", [
      Buffer.from([0xff, 0xff, 0xff, 0xff]),
    ]);
    expect(await journal.verify("s")).toMatchObject({ ok: false, kind: "undecodable", seq: 4 });
    await expect(journal.readRange("s")).rejects.toMatchObject({ code: ErrorCode.DataLoss });
  });

  it("a row inserted past the head is tampered", async () => {
    await raw.query(
      "INSERT INTO events SELECT session, 6, content_hash, content_hash, fence, event FROM events WHERE session = 's' AND seq = 5",
    );
    expect(await journal.verify("s")).toMatchObject({ ok: false, kind: "tampered", seq: 6 });
  });
});

describe("postgres journal: schema", () => {
  it("stamps the schema version and refuses a newer stamp with FailedPrecondition", async () => {
    const name = schema();
    const journal = await created(await openFresh(name), "s");
    await journal.append("s", 0, 0, inputEvent("kept"));
    await journal.close();
    const raw = await rawClient(name);
    try {
      expect((await raw.query<{ version: number }>("SELECT version FROM harnesshost_schema")).rows).toEqual([
        { version: PG_SCHEMA_VERSION },
      ]);
      await raw.query("INSERT INTO harnesshost_schema (version, applied_at_ms) VALUES (7, 0)");
    } finally {
      await raw.end();
    }
    const err = await openFresh(name).then(
      (j) => j.close().then(() => undefined),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(HostError);
    expect((err as HostError).code).toBe(ErrorCode.FailedPrecondition);
    expect((err as HostError).message).toBe(
      `journal schema version 7 is newer than this build supports (${PG_SCHEMA_VERSION})`,
    );
  });

  it("aVersion1SchemaIsBackfilledWithEveryPinAtOpen", async () => {
    // A version-1 schema: this build's tables without the pin columns, stamped 1, with pinned sessions.
    const name = schema();
    const writer = await openFresh(name);
    await writePinnedSessions(writer);
    await writer.close();
    const raw = await rawClient(name);
    try {
      await raw.query("DROP INDEX sessions_pin");
      for (const c of ["pin_seq", "pin_harness", "pin_version", "pin_digest"])
        await raw.query(`ALTER TABLE sessions DROP COLUMN ${c}`);
      await raw.query("UPDATE harnesshost_schema SET version = 1");
    } finally {
      await raw.end();
    }
    const upgraded = await openFresh(name);
    try {
      await expectPinsBackfilled(upgraded);
    } finally {
      await upgraded.close();
    }
  });

  it("anExistingSchemaGetsTheListIndexesOnItsFirstOpen", async () => {
    const name = schema();
    const indexes = async (): Promise<string[]> => {
      const raw = await rawClient(name);
      try {
        const r = await raw.query<{ indexname: string }>(
          "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname IN ('sessions_parent_created', 'sessions_project_harness_created') ORDER BY indexname",
          [name],
        );
        return r.rows.map((x) => x.indexname);
      } finally {
        await raw.end();
      }
    };
    const first = await openFresh(name);
    await first.createSession({ uid: "p", project: "default", harness: "echo" });
    await first.close();
    expect(await indexes()).toEqual(["sessions_parent_created", "sessions_project_harness_created"]);
    const raw = await rawClient(name);
    try {
      await raw.query("DROP INDEX sessions_parent_created");
      await raw.query("DROP INDEX sessions_project_harness_created");
    } finally {
      await raw.end();
    }
    expect(await indexes()).toEqual([]);
    const reopened = await openFresh(name);
    expect((await reopened.getSession("p"))?.harness).toBe("echo");
    await reopened.close();
    expect(await indexes()).toEqual(["sessions_parent_created", "sessions_project_harness_created"]);
  });

  it("lets concurrent first opens of one schema all succeed and migrate once", async () => {
    const name = schema();
    const journals = await Promise.all([openFresh(name), openFresh(name), openFresh(name)]);
    try {
      const raw = await rawClient(name);
      try {
        expect((await raw.query("SELECT version FROM harnesshost_schema")).rowCount).toBe(1);
      } finally {
        await raw.end();
      }
      const [a, b] = journals;
      if (a !== undefined) await created(a, "s");
      await a?.append("s", 0, 0, inputEvent("from a"));
      expect((await b?.head("s"))?.seq).toBe(1);
    } finally {
      await Promise.all(journals.map((j) => j.close()));
    }
  });

  it("keeps data across reopen, and openJournal opens postgres:// URLs (schema from ?schema=)", async () => {
    const name = schema();
    const first = await openJournal(`${PG_URL}?schema=${name}`);
    expect(first.kind).toBe("postgres");
    await created(first, "s");
    await first.newFence("s");
    const records = await first.appendBatch("s", 0, 1, [inputEvent("a"), outputEvent("b")]);
    await first.close();
    const second = await openFresh(name);
    try {
      expect((await second.readRange("s")).map((r) => r.contentHash)).toEqual(records.map((r) => r.contentHash));
      expect(await second.currentFence("s")).toBe(1);
      expect(await second.verify("s")).toMatchObject({ ok: true, records: 2 });
    } finally {
      await second.close();
    }
  });

  it("refuses a schema name it would have to quote", async () => {
    await expect(PostgresJournal.open(PG_URL, { schema: 'x"; DROP TABLE y; --' })).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
    });
  });
});

describe("postgres journal: two hosts", () => {
  let hostA: PostgresJournal;
  let hostB: PostgresJournal;

  let shared: string;

  beforeEach(async () => {
    shared = schema();
    hostA = await openFresh(shared);
    hostB = await openFresh(shared);
  });

  afterEach(async () => {
    await hostA.close();
    await hostB.close();
  });

  async function appendWithRetry(journal: Journal, session: string, id: string, count: number): Promise<number> {
    let conflicts = 0;
    for (let i = 0; i < count; i += 1) {
      for (;;) {
        const head = await journal.head(session);
        try {
          await journal.append(session, head.seq, 0, outputEvent(`${id}-${i}`, id));
          break;
        } catch (err) {
          if (!isHostError(err, ErrorCode.Conflict)) throw err;
          conflicts += 1;
        }
      }
    }
    return conflicts;
  }

  it("appending concurrently to one session with CAS retry ends dense and verifiable", async () => {
    const perHost = 25;
    await created(hostA, "shared");
    await Promise.all([
      appendWithRetry(hostA, "shared", "ha", perHost),
      appendWithRetry(hostB, "shared", "hb", perHost),
    ]);
    const records = await hostA.readRange("shared");
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 2 * perHost }, (_, i) => i + 1));
    const byHost = (id: string) => records.filter((r) => r.event.executionId === id).map((r) => r.event);
    expect([byHost("ha").length, byHost("hb").length]).toEqual([perHost, perHost]);
    expect(await hostB.verify("shared")).toMatchObject({ ok: true, records: 2 * perHost });
  });

  it("a stale expected seq from the other host is Conflict, and an old fence is Fenced", async () => {
    await created(hostA, "s");
    await hostA.append("s", 0, 0, inputEvent("a"));
    await expect(hostB.append("s", 0, 0, inputEvent("b"))).rejects.toMatchObject({ code: ErrorCode.Conflict });
    expect(await hostB.newFence("s")).toBe(1);
    await expect(hostA.append("s", 1, 0, inputEvent("zombie"))).rejects.toMatchObject({ code: ErrorCode.Fenced });
    expect((await hostA.head("s")).seq).toBe(1);
  });

  // docs/protocol.md §18 rule 8. Host A's Delete is held open (its row lock taken) while host B mints a
  // fence for one session and appends to another; both wait on the row, and once the Delete commits
  // each finds the session gone: NOT_FOUND, and neither row comes back.
  it("aDeletedSessionIsNeverRecreatedByARacingWrite", async () => {
    await hostA.createSession({ uid: "s-raced", project: "default", harness: "echo" });
    await hostA.append("s-raced", 0, 0, inputEvent("a"));
    await hostA.createSession({ uid: "s-raced-empty", project: "default", harness: "echo" });
    const deleting = await rawClient(shared);
    const watching = await rawClient(shared);
    try {
      const pid = (await deleting.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
      const blocked = async (n: number): Promise<void> => {
        const deadline = Date.now() + 10_000;
        for (;;) {
          const { rows } = await watching.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
            [pid],
          );
          if ((rows[0]?.n ?? 0) >= n) return;
          if (Date.now() > deadline) throw new Error(`never saw ${n} writers wait on the Delete`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      await deleting.query("BEGIN");
      expect(await deleteSessionIn(deleting as pg.PoolClient, "s-raced")).toBe(true);
      expect(await deleteSessionIn(deleting as pg.PoolClient, "s-raced-empty")).toBe(true);
      const fence = hostB.newFence("s-raced").then(
        () => "minted",
        (err: unknown) => err,
      );
      await blocked(1);
      const append = hostB.append("s-raced-empty", 0, 0, inputEvent("late")).then(
        () => "appended",
        (err: unknown) => err,
      );
      await blocked(2);
      await deleting.query("COMMIT");
      expect(await fence).toMatchObject({ code: ErrorCode.NotFound });
      expect(await append).toMatchObject({ code: ErrorCode.NotFound });
      for (const journal of [hostA, hostB]) {
        expect(await journal.getSession("s-raced")).toBeUndefined();
        expect(await journal.getSession("s-raced-empty")).toBeUndefined();
        expect(await journal.allSessionUids()).toEqual([]);
      }
    } finally {
      await deleting.end();
      await watching.end();
    }
  });

  it("the session advisory lock admits one host at a time and is freed by release or close", async () => {
    const releaseA = await hostA.tryLockSession("locked");
    expect(releaseA).toBeTypeOf("function");
    expect(await hostB.tryLockSession("locked")).toBeUndefined();
    expect(await hostA.tryLockSession("locked")).toBeUndefined();
    const releaseOther = await hostB.tryLockSession("other");
    expect(releaseOther).toBeTypeOf("function");
    await releaseA?.();
    await releaseA?.();
    const releaseB = await hostB.tryLockSession("locked");
    expect(releaseB).toBeTypeOf("function");
    expect(await hostA.tryLockSession("locked")).toBeUndefined();
    await releaseB?.();
    await releaseOther?.();

    // A host that goes away (close ends its lock connections) frees its sessions for the other.
    expect(await hostA.tryLockSession("orphaned")).toBeTypeOf("function");
    expect(await hostB.tryLockSession("orphaned")).toBeUndefined();
    await hostA.close();
    const adopted = await hostB.tryLockSession("orphaned");
    expect(adopted).toBeTypeOf("function");
    await adopted?.();
  });
});

describe("postgres journal: a held session's head", () => {
  let hostA: PostgresJournal;
  let hostB: PostgresJournal;

  let shared: string;

  beforeEach(async () => {
    shared = schema();
    hostA = await openFresh(shared);
    hostB = await openFresh(shared);
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    await hostA.close();
    await hostB.close();
  });

  /** Counts the journal's statements that read a session row (head, fence, getSession). */
  function sessionReads(journal: PostgresJournal): () => number {
    const spy = vi.spyOn(journal.pool, "query");
    return () =>
      spy.mock.calls.filter((call) => {
        const text = typeof call[0] === "string" ? call[0] : "";
        return /FROM sessions WHERE uid = \$1/.test(text);
      }).length;
  }

  it("aHeldSessionsHeadIsReadOncePerHold: the lock reads the row, the holder's commits move it; a parked lease serves nothing", async () => {
    await created(hostA, "s");
    await hostA.append("s", 0, 0, inputEvent("first"));
    const reads = sessionReads(hostA);
    const release = await hostA.tryLockSession("s");
    expect(release).toBeTypeOf("function");
    const info = await hostA.getSession("s");
    expect(info?.lastSeq).toBe(1);
    const head = await hostA.head("s");
    expect(head).toEqual({ seq: 1, hash: info?.lastHash });
    expect(await hostA.head("s")).toEqual(head);
    // The row came with the lock, in the lock's round trip: no statement of the pool read it.
    expect(reads()).toBe(0);
    const [second] = await hostA.appendBatch("s", 1, 0, [outputEvent("second", "e")]);
    expect(await hostA.head("s")).toEqual({ seq: 2, hash: second?.contentHash });
    // The holder's own commit moved the row it serves: it is the stored row, column for column.
    expect(await hostA.getSession("s")).toEqual(await hostB.getSession("s"));
    expect(reads()).toBe(0);
    await release?.();
    expect(hostA.locks.parked).toEqual(["s"]);
    // Parked between operations: readers outside an operation read the database.
    expect((await hostA.getSession("s"))?.lastSeq).toBe(2);
    expect(reads()).toBe(1);
    const again = await hostA.tryLockSession("s");
    expect(hostA.locks.parked).toEqual([]);
    expect(await hostA.getSession("s")).toEqual(await hostB.getSession("s"));
    expect(reads()).toBe(1);
    await again?.();
  });

  it("withoutLeasesAReleaseForgetsTheHeadAndTheNextHoldReadsWhatAnotherWriterCommitted", async () => {
    const name = schema();
    const a = await PostgresJournal.open(PG_URL, { schema: name, poolSize: 4, sessionLeaseMs: 0 });
    const b = await PostgresJournal.open(PG_URL, { schema: name, poolSize: 4, sessionLeaseMs: 0 });
    try {
      await created(a, "s");
      await a.append("s", 0, 0, inputEvent("first"));
      const reads = sessionReads(a);
      const release = await a.tryLockSession("s");
      expect((await a.getSession("s"))?.lastSeq).toBe(1);
      await release?.();
      expect(a.locks.parked).toEqual([]);
      await b.append("s", 1, 0, inputEvent("from B"));
      expect((await a.head("s")).seq).toBe(2);
      expect(reads()).toBe(1);
      const again = await a.tryLockSession("s");
      expect((await a.getSession("s"))?.lastSeq).toBe(2);
      expect(reads()).toBe(1);
      await again?.();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("theRowReadWithTheLockIsTheCommittedOne: after the previous holder's last commit, for any uid", async () => {
    const uid = `it's a \\ "quoted" uid; SELECT 1`;
    await created(hostB, uid);
    const releaseB = await hostB.tryLockSession(uid);
    await hostB.append(uid, 0, 0, inputEvent("B's turn"));
    const fence = await hostB.newFence(uid);
    await releaseB?.();
    const releaseA = await hostA.tryLockSession(uid);
    const info = await hostA.getSession(uid);
    expect(info).toMatchObject({ uid, lastSeq: 1, fence });
    expect(await hostA.head(uid)).toEqual({ seq: 1, hash: info?.lastHash });
    await releaseA?.();
    expect(await hostA.tryLockSession("never created")).toBeTypeOf("function");
    expect(await hostA.getSession("never created")).toBeUndefined();
  });

  it("theNamedCommitSurvivesASchemaChange: a column added by another host's migration leaves appends working", async () => {
    // The optimistic commit is a named statement, parsed and planned once per connection.
    await created(hostA, "named");
    await hostA.append("named", 0, 0, inputEvent("one"));
    await hostA.append("named", 1, 0, inputEvent("two"));
    const raw = await rawClient(hostA.schema ?? "");
    try {
      await raw.query("ALTER TABLE sessions ADD COLUMN added_later text");
      await raw.query("ALTER TABLE events ADD COLUMN added_later text");
    } finally {
      await raw.end();
    }
    await hostA.append("named", 2, 0, inputEvent("three"));
    await hostA.append("named", 3, 0, inputEvent("four"));
    expect(await hostA.verify("named")).toMatchObject({ ok: true, records: 4 });
  });

  it("aStaleHeldHeadLetsNoWriteThrough: a writer without the lock moves the head, the holder's append is Conflict and its next head is read", async () => {
    await created(hostA, "s");
    await hostA.append("s", 0, 0, inputEvent("first"));
    const release = await hostA.tryLockSession("s");
    expect((await hostA.head("s")).seq).toBe(1);
    // A host that lost the lock without noticing still writes (fencing is the other guard; fence 0 here).
    await hostB.append("s", 1, 0, inputEvent("stale host"));
    expect((await hostA.head("s")).seq).toBe(1);
    await expect(hostA.append("s", 1, 0, inputEvent("holder"))).rejects.toMatchObject({ code: ErrorCode.Conflict });
    const head = await hostA.head("s");
    expect(head.seq).toBe(2);
    await hostA.append("s", head.seq, 0, inputEvent("holder, retried"));
    expect(await hostA.verify("s")).toMatchObject({ ok: true, records: 3 });
    await release?.();
  });
});

describe("postgres journal: session-lock capacity", () => {
  it("refuses, rather than queues, a lock beyond maxSessionLocks", async () => {
    const journal = await PostgresJournal.open(PG_URL, { schema: schema(), poolSize: 1, maxSessionLocks: 1 });
    try {
      const release = await journal.tryLockSession("one");
      expect(release).toBeTypeOf("function");
      await expect(journal.tryLockSession("two")).rejects.toMatchObject({ code: ErrorCode.Unavailable });
      await release?.();
      const next = await journal.tryLockSession("two");
      expect(next).toBeTypeOf("function");
      await next?.();
    } finally {
      await journal.close();
    }
  });
});

describe("postgres journal: same bytes as SQLite", () => {
  let dir: string;
  let sqlite: SqliteJournal;
  let postgres: PostgresJournal;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "hh-pg-vs-sqlite-"));
    sqlite = SqliteJournal.open(join(dir, "journal.db"));
    postgres = await openFresh();
  });

  afterEach(async () => {
    await sqlite.close();
    await postgres.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("exports a byte-identical JSONL chain for the same events, forks included", async () => {
    const events = multiTurnEvents();
    for (const journal of [sqlite, postgres] as Journal[]) {
      await created(journal, "s");
      await journal.newFence("s");
      await journal.appendBatch("s", 0, 1, events.slice(0, 4));
      for (const [i, ev] of events.slice(4).entries()) await journal.append("s", 4 + i, 1, ev);
      await journal.append("s", events.length, 1, toolCallEvent("c9", { n: 1e21, f: 0.1 }));
      await journal.fork("s", "child", 3, { uid: "child", project: "default", harness: "chat" });
      await journal.append("child", 4, 1, inputEvent("branch ✓"));
    }
    for (const session of ["s", "child"]) {
      const fromSqlite = await exported(sqlite, session);
      const fromPostgres = await exported(postgres, session);
      expect(fromPostgres.length).toBeGreaterThan(4);
      expect(fromPostgres.join("\n")).toBe(fromSqlite.join("\n"));
      expect(await verifyJsonl(fromPostgres)).toMatchObject({ ok: true, records: fromPostgres.length });
    }
  });
});
