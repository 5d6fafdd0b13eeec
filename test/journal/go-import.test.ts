// Importing a Go (reference) host's SQLite journal (docs/migrating-from-go.md). The Go-layout files are built
// by go-fixture.ts from the reference's own journal fixtures (see its header for how). Invariants
// under test: an import keeps every seq, prev_hash, content_hash and fence, so `verify` passes and
// `export` equals the source records byte for byte, on SQLite and PostgreSQL; a tampered session is
// refused at its first bad seq and nothing of it is written; unknown schema versions are refused.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/journal/sqlite/driver.js";
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/run.js";
import { EventKind, EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { exportJsonl, jsonlLine, verifyJsonl } from "../../src/journal/transfer/export.js";
import { GO_WRITTEN_THROUGH_ANNOTATION, importGoJournal } from "../../src/journal/transfer/go-import.js";
import { openGoJournal } from "../../src/journal/transfer/go-source.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { DEFAULT_LIMITS } from "../../src/limits/index.js";
import { PostgresJournal } from "../../src/journal/postgres/journal.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { GO_COMPLETED, GO_MIXED, type GoFixtureRecord, type GoFixtureSession, writeGoJournal } from "./go-fixture.js";
import { dropSchemas, freshSchema, PG_URL } from "./postgres-fixture.js";

const dir = mkdtempSync(join(tmpdir(), "hh-go-import-"));
const schemas: string[] = [];
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await dropSchemas(schemas);
});
let n = 0;
const file = (name: string) => join(dir, `${++n}-${name}`);

const CREATED_NS = 1_700_000_000_123_456_789n;
const SESSIONS: GoFixtureSession[] = [
  {
    uid: "sess-completed",
    records: GO_COMPLETED,
    row: {
      fence: 1,
      createdAtNs: CREATED_NS,
      name: "first",
      project: "team-a",
      labels: '{"env":"prod"}',
      identity: '{"principal":"agent://a","issuer":"entra"}',
    },
  },
  { uid: "sess-mixed", records: GO_MIXED, row: { fence: 3, createdAtNs: CREATED_NS + 1n } },
];

/** What export must print for a Go record: the record exactly as the Go host stored it. */
const expectedLines = (records: readonly GoFixtureRecord[]) =>
  records.map((r) =>
    jsonlLine({ seq: r.seq, prevHash: r.prevHash, contentHash: r.hash, fence: r.fence, event: r.event }),
  );

async function exported(journal: Journal, uid: string): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of exportJsonl(journal, uid)) lines.push(line);
  return lines;
}

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

async function expectImported(journal: Journal): Promise<void> {
  for (const s of SESSIONS) {
    expect(await journal.verify(s.uid)).toMatchObject({ ok: true, records: s.records.length });
    const lines = await exported(journal, s.uid);
    expect(lines).toEqual(expectedLines(s.records));
    expect(await verifyJsonl(lines)).toMatchObject({ ok: true });
  }
  const first = await journal.getSession("sess-completed");
  expect(first).toMatchObject({
    name: "first",
    project: "team-a",
    harness: "echo",
    labels: { env: "prod" },
    annotations: { [GO_WRITTEN_THROUGH_ANNOTATION]: "4" },
    createdAtMs: 1_700_000_000_123,
    fence: 1,
    lastSeq: 4,
    lastHash: GO_COMPLETED[3]?.hash,
  });
  expect(first?.identity).toMatchObject({ principal: "agent://a", issuer: "entra" });
  expect(await journal.currentFence("sess-mixed")).toBe(3);
}

describe("import --from-go", () => {
  it("import keeps Go hashes: a current-layout (v2) journal imports into SQLite; verify passes, export is byte-identical", async () => {
    const source = file("go-v2.db");
    writeGoJournal(source, "v2", SESSIONS);
    const target = file("ours.db");
    const res = await cli("import", "--from-go", source, "--journal", target);
    expect(res.err).toBe("");
    expect(res.code).toBe(0);
    expect(res.out).toContain("2/2 sessions imported (Go layout v2)");
    const journal = SqliteJournal.open(target);
    try {
      await expectImported(journal);
    } finally {
      await journal.close();
    }
    const verify = await cli("verify", "--journal", target);
    expect(verify).toMatchObject({ code: 0 });
    expect(verify.out).toContain("2/2 sessions intact");
    const again = await cli("import", "--from-go", source, "--journal", target, "--json");
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({
      refused: 0,
      sessions: [{ status: "unchanged" }, { status: "unchanged" }],
    });
  });

  it("import keeps Go hashes on PostgreSQL through the journal abstraction", async () => {
    const source = file("go-v2-pg.db");
    writeGoJournal(source, "v2", SESSIONS);
    const schema = freshSchema();
    schemas.push(schema);
    const res = await cli("import", "--from-go", source, "--journal", `${PG_URL}?schema=${schema}`);
    expect(res).toMatchObject({ code: 0, err: "" });
    const journal = await PostgresJournal.open(PG_URL, { schema });
    try {
      await expectImported(journal);
    } finally {
      await journal.close();
    }
  });

  it("reads the v0.1.2-era layout (unstamped), including a session that exists only as events", async () => {
    const source = file("go-v012.db");
    writeGoJournal(source, "v0.1.2", [SESSIONS[0] as GoFixtureSession, { uid: "sess-mixed", records: GO_MIXED }]);
    const go = openGoJournal(source);
    const journal = new MemoryJournal();
    try {
      const report = await importGoJournal(go, journal);
      expect(report).toMatchObject({ layout: "v0.1.2", refused: 0 });
      await expectImported(journal);
      expect(await journal.getSession("sess-mixed")).toMatchObject({ project: "default", fence: 3 });
    } finally {
      go.close();
    }
  });

  it("import refuses a tampered session at its first bad seq and writes nothing of it", async () => {
    const source = file("go-tampered.db");
    writeGoJournal(source, "v2", SESSIONS);
    const db = openSqlite(source);
    const forged = create(EventSchema, {
      executionId: "",
      kind: EventKind.EVENT_OUTPUT,
      body: {
        case: "message",
        value: { role: "assistant", parts: [{ part: { case: "text", value: { text: "echo:HELLO" } } }] },
      },
    });
    db.prepare("UPDATE events SET event = ? WHERE session = 'sess-mixed' AND seq = 3").run(
      toBinary(EventSchema, forged),
    );
    db.prepare("UPDATE events SET prev_hash = 'deadbeef' WHERE session = 'sess-mixed' AND seq = 7").run();
    db.close();
    const target = file("ours-tampered.db");
    const res = await cli("import", "--from-go", source, "--journal", target);
    expect(res.code).toBe(1);
    expect(res.err).toContain("REFUSED sess-mixed tampered at seq 3");
    expect(res.out).toContain("1/2 sessions imported");
    const journal = SqliteJournal.open(target);
    try {
      expect(await journal.getSession("sess-mixed")).toBeUndefined();
      expect(await journal.readRange("sess-mixed")).toEqual([]);
      expect(await journal.verify("sess-completed")).toMatchObject({ ok: true, records: 4 });
    } finally {
      await journal.close();
    }
  });

  it("refuses a Go journal with a newer schema stamp, or a file that is not one, before writing anything", async () => {
    const source = file("go-v3.db");
    writeGoJournal(source, "v2", SESSIONS);
    const db = openSqlite(source);
    db.pragma("user_version = 3");
    db.close();
    const target = file("ours-v3.db");
    const res = await cli("import", "--from-go", source, "--journal", target);
    expect(res.code).not.toBe(0);
    expect(res.err).toContain("schema version 3");
    const other = file("not-go.db");
    openSqlite(other).exec("CREATE TABLE t (x)").close();
    const res2 = await cli("import", "--from-go", other, "--journal", target);
    expect(res2.code).not.toBe(0);
    expect(res2.err).toContain("not a Go journal");
    const journal = SqliteJournal.open(target);
    try {
      expect(await journal.allSessionUids()).toEqual([]);
    } finally {
      await journal.close();
    }
  });

  it("eachSessionImportsOrIsRefusedOnItsOwn: a bad metadata row or an out-of-range record is refused, the others imported", async () => {
    const source = file("go-per-session.db");
    const good = (uid: string): GoFixtureSession => ({
      uid,
      records: GO_COMPLETED,
      row: { fence: 1, createdAtNs: CREATED_NS },
    });
    writeGoJournal(source, "v2", [
      good("sess-a-good"),
      // Its labels are not JSON: the whole import used to stop before writing anything.
      { uid: "sess-b-badrow", records: GO_COMPLETED, row: { fence: 1, createdAtNs: CREATED_NS, labels: "{not json" } },
      // A record whose fence is out of range: the import used to throw here, after sess-a was written.
      { uid: "sess-c-badfence", records: GO_COMPLETED.map((r) => (r.seq === 2 ? { ...r, fence: -1 } : r)) },
      good("sess-d-good"),
    ]);
    const target = file("ours-per-session.db");
    const res = await cli("import", "--from-go", source, "--journal", target, "--json");
    expect(res.code).toBe(1);
    const report = JSON.parse(res.out) as {
      refused: number;
      sessions: { uid: string; status: string; kind?: string }[];
    };
    expect(report.refused).toBe(2);
    expect(report.sessions.map((s) => [s.uid, s.status, s.kind])).toEqual([
      ["sess-a-good", "imported", undefined],
      ["sess-b-badrow", "refused", "unreadable"],
      ["sess-c-badfence", "refused", "unreadable"],
      ["sess-d-good", "imported", undefined],
    ]);
    const journal = SqliteJournal.open(target);
    try {
      expect(await journal.allSessionUids()).toEqual(["sess-a-good", "sess-d-good"]);
      expect(await journal.verify("sess-d-good")).toMatchObject({ ok: true, records: GO_COMPLETED.length });
    } finally {
      await journal.close();
    }
  });

  it("importedUidsAreValidatedLikeAnyOtherSessionId: a path-like or over-long uid is refused and nothing of it is written", async () => {
    const source = file("go-bad-uids.db");
    const long = `sess-${"a".repeat(DEFAULT_LIMITS.idChars)}`;
    writeGoJournal(source, "v2", [
      { uid: "../../etc/x", records: GO_COMPLETED, row: { fence: 1, createdAtNs: CREATED_NS } },
      { uid: long, records: GO_COMPLETED, row: { fence: 1, createdAtNs: CREATED_NS } },
      { uid: "sess-fine", records: GO_COMPLETED, row: { fence: 1, createdAtNs: CREATED_NS } },
    ]);
    const journal = new MemoryJournal();
    const reader = openGoJournal(source);
    try {
      const report = await importGoJournal(reader, journal);
      expect(report.refused).toBe(2);
      const refused = report.sessions.filter((s) => s.status === "refused");
      expect(refused.map((s) => s.uid).sort()).toEqual(["../../etc/x", long].sort());
      for (const s of refused) expect(s).toMatchObject({ kind: "invalid", seq: 0 });
      expect(await journal.allSessionUids()).toEqual(["sess-fine"]);
    } finally {
      reader.close();
    }
  });
});
