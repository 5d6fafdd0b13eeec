// Group commit (src/journal/commit-queue.ts, the SQLite batch transaction, src/journal/postgres/batch.ts):
// appends from different sessions that arrive together share one transaction, each append is
// acknowledged only once its batch is durable, and a write that fails inside a batch — fence, CAS, an
// unhashable event, a stray row at the database — fails alone and changes nothing. Run on SQLite and
// PostgreSQL (the memory journal has no commit to share).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/journal/sqlite-driver.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ErrorCode, grpcStatusNameOf, HostError } from "../../src/errors/index.js";
import { Lifecycle_Kind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { PostgresJournal } from "../../src/journal/postgres/journal.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { inputEvent, lifecycleEvent, outputEvent, unhashableEvent } from "./events.js";
import { dropSchemas, freshSchema, PG_URL, rawClient } from "./postgres-fixture.js";
import { created } from "./sessions.js";

const DIGEST = `sha256:${"cd".repeat(32)}`;

interface Backend {
  readonly journal: Journal & { readonly groupCommitStats: { readonly batches: number; readonly writes: number } };
  /** Whether a second connection sees a record at (session, seq) — committed, durable data only. */
  visible(session: string, seq: number): Promise<boolean>;
  /** Plants a row at (session, seq) behind the journal's back, as a stray writer would. */
  plantRow(session: string, seq: number): Promise<void>;
  /** Makes the next batch that includes `session` wait before it can commit; resolves to its release. */
  holdCommits(session: string): Promise<() => Promise<void>>;
  /** Resolves once a batch is queued or waiting and has not committed. */
  untilCommitWaits(): Promise<void>;
  close(): Promise<void>;
}

const dirs: string[] = [];
const schemas: string[] = [];
const open: Backend[] = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterAll(async () => {
  await dropSchemas(schemas.splice(0));
});

async function sqlite(): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), "hh-group-"));
  dirs.push(dir);
  const file = join(dir, "journal.db");
  const journal = SqliteJournal.open(file);
  const raw = openSqlite(file);
  const backend: Backend = {
    journal,
    visible: async (session, seq) =>
      raw.prepare("SELECT 1 FROM events WHERE session = ? AND seq = ?").get(session, seq) !== undefined,
    plantRow: async (session, seq) => {
      raw
        .prepare(
          "INSERT INTO events (session, seq, prev_hash, content_hash, fence, event) VALUES (?, ?, '', '', 0, X'')",
        )
        .run(session, seq);
    },
    // better-sqlite3 commits synchronously on the event loop: until this tick yields, the batch is queued.
    holdCommits: async () => async () => undefined,
    untilCommitWaits: async () => undefined,
    close: async () => {
      raw.close();
      await journal.close();
    },
  };
  open.push(backend);
  return backend;
}

async function postgres(): Promise<Backend> {
  const schema = freshSchema();
  schemas.push(schema);
  const journal = await PostgresJournal.open(PG_URL, { schema, poolSize: 4 });
  const raw = await rawClient(schema);
  const backend: Backend = {
    journal,
    visible: async (session, seq) =>
      ((await raw.query("SELECT 1 FROM events WHERE session = $1 AND seq = $2", [session, seq])).rowCount ?? 0) > 0,
    plantRow: async (session, seq) => {
      await raw.query(
        "INSERT INTO events (session, seq, prev_hash, content_hash, fence, event) VALUES ($1, $2, '', '', 0, '')",
        [session, seq],
      );
    },
    holdCommits: async (session) => {
      const holder = await rawClient(schema);
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM sessions WHERE uid = $1 FOR UPDATE", [session]);
      return async () => {
        await holder.query("COMMIT");
        await holder.end();
      };
    },
    untilCommitWaits: async () => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const waiting = await raw.query(
          "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%sessions%' AND datname = current_database()",
        );
        if ((waiting.rowCount ?? 0) > 0) return;
        if (Date.now() > deadline) throw new Error("the batch never waited for the held row lock");
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: async () => {
      await raw.end();
      await journal.close();
    },
  };
  open.push(backend);
  return backend;
}

/** Settles every promise; each entry is the value or the HostError code it was rejected with. */
async function outcomes<T>(promises: readonly Promise<T>[]): Promise<(T | ErrorCode)[]> {
  return Promise.all(
    promises.map((p) =>
      p.then(
        (v) => v,
        (err: unknown) => {
          if (err instanceof HostError) return err.code;
          throw err;
        },
      ),
    ),
  );
}

const sessions = (n: number, prefix = "s") => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

for (const [name, make] of [
  ["sqlite", sqlite],
  ["postgres", postgres],
] as const) {
  describe(`group commit: ${name}`, () => {
    it("groupCommitSharesOneTransaction: appends from 50 sessions in one tick commit as one batch", async () => {
      const { journal } = await make();
      const before = journal.groupCommitStats;
      const uids = sessions(50);
      await created(journal, ...uids);
      await Promise.all(uids.map((s) => journal.append(s, 0, 0, inputEvent(`hi ${s}`))));
      expect(journal.groupCommitStats.batches - before.batches).toBe(1);
      expect(journal.groupCommitStats.writes - before.writes).toBe(50);
      for (const s of uids) expect(await journal.verify(s)).toMatchObject({ ok: true, records: 1 });
    });

    it("groupCommitAcknowledgesOnlyDurableAppends: nothing is acknowledged before another connection sees it", async () => {
      const backend = await make();
      const { journal } = backend;
      const uids = sessions(20);
      await created(journal, ...uids);
      await journal.append(uids[0]!, 0, 0, inputEvent("first"));
      // Holds the batch's commit back where the backend allows it (PostgreSQL: a row lock the batch
      // waits for); SQLite commits synchronously in the event loop's check phase, after this tick.
      const release = await backend.holdCommits(uids[0]!);
      const acked: string[] = [];
      const checks: Promise<boolean>[] = [];
      const pending = uids.map((s, i) =>
        journal.append(s, i === 0 ? 1 : 0, 0, inputEvent(s)).then((record) => {
          acked.push(s);
          // Checked at the moment of acknowledgement, from a connection outside the journal.
          checks.push(backend.visible(s, record.seq));
          return record;
        }),
      );
      await backend.untilCommitWaits();
      expect(acked).toEqual([]);
      for (const s of uids.slice(1)) expect(await backend.visible(s, 1)).toBe(false);
      expect(acked).toEqual([]);
      await release();
      await Promise.all(pending);
      expect(await Promise.all(checks)).toEqual(uids.map(() => true));
    });

    it("groupCommitFenceConflictFailsOnlyThatAppend: a stale fence is ABORTED, the batch commits the rest", async () => {
      const { journal } = await make();
      await created(journal, "a", "b", "c");
      for (const s of ["a", "b", "c"]) await journal.append(s, 0, 0, inputEvent(s));
      await journal.newFence("b");
      const fenceB = await journal.newFence("b");
      const headB = await journal.head("b");
      const got = await outcomes<unknown>([
        journal.append("a", 1, 0, outputEvent("a2")),
        journal.append("b", 1, fenceB - 1, outputEvent("stale")),
        journal.append("c", 1, 0, outputEvent("c2")),
      ]);
      expect(got[1]).toBe(ErrorCode.Fenced);
      expect(grpcStatusNameOf(ErrorCode.Fenced)).toBe("ABORTED");
      expect(got[0]).toMatchObject({ seq: 2 });
      expect(got[2]).toMatchObject({ seq: 2 });
      expect(await journal.head("b")).toEqual(headB);
      expect(await journal.currentFence("b")).toBe(fenceB);
      for (const s of ["a", "b", "c"]) expect(await journal.verify(s)).toMatchObject({ ok: true });
    });

    it("groupCommitCasConflictFailsOnlyThatAppend, and keeps per-session order inside a batch", async () => {
      const { journal } = await make();
      await created(journal, "x", "y");
      const got = await outcomes<unknown>([
        journal.append("x", 0, 0, inputEvent("x1")),
        journal.append("x", 1, 0, outputEvent("x2")), // chained on the write queued before it
        journal.append("x", 1, 0, outputEvent("x2 again")), // lost the race: head is 2 by now
        journal.append("y", 0, 0, inputEvent("y1")),
      ]);
      expect(got[0]).toMatchObject({ seq: 1 });
      expect(got[1]).toMatchObject({ seq: 2 });
      expect(got[2]).toBe(ErrorCode.Conflict);
      expect(got[3]).toMatchObject({ seq: 1 });
      const texts = (await journal.readRange("x")).map((r) => r.event.executionId);
      expect(texts).toHaveLength(2);
      expect(await journal.verify("x")).toMatchObject({ ok: true, records: 2 });
    });

    it("groupCommitInvalidEventFailsOnlyThatAppend: an unhashable batch, or a write to a session nobody created, fails alone and changes nothing", async () => {
      const { journal } = await make();
      await created(journal, "new-bad", "new-good");
      const got = await outcomes<unknown>([
        journal.appendBatch("new-bad", 0, 0, [inputEvent("ok"), unhashableEvent()]),
        journal.append("new-good", 0, 0, inputEvent("ok")),
        journal.append("nobody", 0, 0, inputEvent("ok")),
      ]);
      expect(got[0]).toBe(ErrorCode.InvalidArgument);
      expect(got[1]).toMatchObject({ seq: 1 });
      expect(got[2]).toBe(ErrorCode.NotFound);
      expect(await journal.head("new-bad")).toEqual({ seq: 0, hash: "" });
      expect(await journal.getSession("nobody")).toBeUndefined();
    });

    it("groupCommitStrayRowFailsOnlyThatAppend: a write the database refuses fails alone", async () => {
      const backend = await make();
      const { journal } = backend;
      await created(journal, "p", "q", "r");
      for (const s of ["p", "q", "r"]) await journal.append(s, 0, 0, inputEvent(s));
      await backend.plantRow("q", 2);
      const got = await outcomes<unknown>([
        journal.append("p", 1, 0, outputEvent("p2")),
        journal.append("q", 1, 0, outputEvent("q2")),
        journal.append("r", 1, 0, outputEvent("r2")),
      ]);
      expect(got[1]).toBe(ErrorCode.Conflict);
      expect(got[0]).toMatchObject({ seq: 2 });
      expect(got[2]).toMatchObject({ seq: 2 });
      expect(await journal.head("q")).toMatchObject({ seq: 1 });
      for (const s of ["p", "r"]) expect(await journal.verify(s)).toMatchObject({ ok: true, records: 2 });
    });

    it("groupCommitFencedAppendsShareTheBatch: fences minted, records and checkpoints written, one commit", async () => {
      const { journal } = await make();
      await created(journal, "f1", "f2", "f3");
      for (const s of ["f1", "f2"]) await journal.append(s, 0, 0, inputEvent(s));
      const fenced = journal.appendUnderNewFence;
      if (fenced === undefined) throw new Error(`${name} journal has no native appendUnderNewFence`);
      const before = journal.groupCommitStats.batches;
      const got = await outcomes<unknown>([
        fenced.call(journal, "f1", 1, [lifecycleEvent(Lifecycle_Kind.LIFECYCLE_SUSPEND)], { checkpointDigest: DIGEST }),
        fenced.call(journal, "f2", 7, [lifecycleEvent(Lifecycle_Kind.LIFECYCLE_SUSPEND)]), // CAS: mints nothing
        journal.append("f3", 0, 0, inputEvent("f3")),
      ]);
      expect(journal.groupCommitStats.batches - before).toBe(1);
      expect(got[0]).toMatchObject({ fence: 1, records: [{ seq: 2, fence: 1 }] });
      expect(got[1]).toBe(ErrorCode.Conflict);
      expect(await journal.currentFence("f1")).toBe(1);
      expect(await journal.currentFence("f2")).toBe(0);
      expect(await journal.latestCheckpoint("f1")).toMatchObject({ seq: 2, digest: DIGEST });
      // A later append under the minted fence is accepted; under the old one it is fenced.
      expect(await outcomes([journal.append("f1", 2, 0, outputEvent("old"))])).toEqual([ErrorCode.Fenced]);
      await journal.append("f1", 2, 1, outputEvent("new"));
      expect(await journal.verify("f1")).toMatchObject({ ok: true, records: 3 });
    });

    it("close commits the appends still queued before it", async () => {
      const backend = await make();
      const { journal } = backend;
      await created(journal, ...sessions(5, "c"));
      const pending = sessions(5, "c").map((s) => journal.append(s, 0, 0, inputEvent(s)));
      await journal.close();
      const records = await Promise.all(pending);
      expect(records.map((r) => r.seq)).toEqual([1, 1, 1, 1, 1]);
      for (const s of sessions(5, "c")) expect(await backend.visible(s, 1)).toBe(true);
    });
  });
}

describe("group commit: off", () => {
  it("groupCommit: false commits each append on its own", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hh-group-off-"));
    dirs.push(dir);
    const journal = SqliteJournal.open(join(dir, "journal.db"), { groupCommit: false });
    try {
      await created(journal, ...sessions(10));
      await Promise.all(sessions(10).map((s) => journal.append(s, 0, 0, inputEvent(s))));
      expect(journal.groupCommitStats).toEqual({ batches: 0, writes: 0 });
      for (const s of sessions(10)) expect(await journal.verify(s)).toMatchObject({ ok: true, records: 1 });
    } finally {
      await journal.close();
    }
  });
});

describe("group commit: postgres, two journals on one schema (two hosts)", () => {
  it("groupCommitOptimisticAppendYieldsToAnotherHost: a remembered head another host moved is re-read under lock", async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const a = await PostgresJournal.open(PG_URL, { schema, poolSize: 2 });
    const b = await PostgresJournal.open(PG_URL, { schema, poolSize: 2 });
    try {
      await created(a, "shared");
      await a.append("shared", 0, 0, inputEvent("a1")); // a remembers head 1
      await a.append("shared", 1, 0, outputEvent("a2")); // a's remembered head was right: head 2
      await b.append("shared", 2, 0, outputEvent("b3")); // b moves it behind a's back
      // a's guess (head 2) is stale: its CAS against the stored head is what decides.
      expect(await outcomes<unknown>([a.append("shared", 2, 0, outputEvent("stale"))])).toEqual([ErrorCode.Conflict]);
      await a.append("shared", 3, 0, outputEvent("a4"));
      // b mints a fence; a's remembered fence is stale and its old-fence append is refused.
      const fence = await b.newFence("shared");
      expect(await outcomes<unknown>([a.append("shared", 4, 0, outputEvent("old fence"))])).toEqual([ErrorCode.Fenced]);
      await a.append("shared", 4, fence, outputEvent("a5"));
      const records = await b.readRange("shared");
      expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(await b.verify("shared")).toMatchObject({ ok: true, records: 5 });
    } finally {
      await a.close();
      await b.close();
    }
  });
});
