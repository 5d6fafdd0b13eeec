// Session leases on PostgreSQL (src/journal/postgres/lock.ts, docs/scaling.md "The session lock and
// fences"): a released lock stays held for this host's next operation, and is handed to another host
// that asks for it; a lock in use is not.
import type pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors/index.js";
import { HostMetrics } from "../../src/obs/metrics.js";
import { parseExposition, sampleValue } from "../obs/scrape.js";
import { PostgresJournal, type PostgresJournalOptions } from "../../src/journal/postgres/journal.js";
import { sessionLockKey } from "../../src/journal/postgres/lock.js";
import { eventually } from "../fixtures/eventually.js";
import { inputEvent } from "./events.js";
import { dropSchemas, freshSchema, PG_URL, rawClient } from "./postgres-fixture.js";
import { created } from "./sessions.js";

const schemas: string[] = [];
const open: PostgresJournal[] = [];
const raws: pg.Client[] = [];

afterEach(async () => {
  for (const j of open.splice(0)) await j.close();
  for (const r of raws.splice(0)) await r.end();
});
afterAll(async () => {
  await dropSchemas(schemas.splice(0));
});

/** Two hosts on one fresh schema, and a raw connection to look at the locks from outside. */
async function cluster(opts: PostgresJournalOptions = {}): Promise<{
  a: PostgresJournal;
  b: PostgresJournal;
  /** Whether nobody holds `session`'s lock: a try from outside gets it (and gives it back). */
  free: (session: string) => Promise<boolean>;
}> {
  const schema = freshSchema();
  schemas.push(schema);
  const a = await PostgresJournal.open(PG_URL, { schema, poolSize: 2, ...opts });
  const b = await PostgresJournal.open(PG_URL, { schema, poolSize: 2, ...opts });
  open.push(a, b);
  await created(a, "s"); // the session the tests write to (a journal writes only to a created one)
  const raw = await rawClient(schema);
  raws.push(raw);
  const free = async (session: string): Promise<boolean> => {
    const key = sessionLockKey(schema, session);
    const got = await raw.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS locked", [key]);
    if (got.rows[0]?.locked !== true) return false;
    await raw.query("SELECT pg_advisory_unlock($1::bigint)", [key]);
    return true;
  };
  return { a, b, free };
}

describe("postgres session leases", () => {
  it("aReleasedSessionStaysLockedAsALeaseForItsHostsNextOperation", async () => {
    const { a, free } = await cluster({ sessionLeaseMs: 60_000 });
    const release = await a.tryLockSession("s");
    await release?.();
    expect(a.locks.parked).toEqual(["s"]);
    expect(await free("s")).toBe(false);
    const again = await a.tryLockSession("s");
    expect(again).toBeTypeOf("function");
    expect(a.locks.parked).toEqual([]);
    // In use on this host: a second caller here is refused, as without leases.
    expect(await a.tryLockSession("s")).toBeUndefined();
    await again?.();
  });

  it("anotherHostAskingForALeasedSessionGetsItWithoutWaitingForTheLeaseToEnd", async () => {
    // The lease would last a minute and the handover wait is 30 s: getting the session at all within
    // the test's time means the holder let it go when asked.
    const { a, b } = await cluster({ sessionLeaseMs: 60_000, sessionHandoverMs: 30_000 });
    const releaseA = await a.tryLockSession("s");
    await a.append("s", 0, 0, inputEvent("on A"));
    await releaseA?.();
    expect(a.locks.parked).toEqual(["s"]);
    const releaseB = await b.tryLockSession("s");
    expect(releaseB).toBeTypeOf("function");
    expect(a.locks.parked).toEqual([]);
    // B read the row A committed, with the lock.
    expect((await b.getSession("s"))?.lastSeq).toBe(1);
    await b.append("s", 1, 0, inputEvent("on B"));
    await releaseB?.();
    // And back: A's next operation asks B, and reads the row again (its lease was let go).
    const releaseA2 = await a.tryLockSession("s");
    expect(releaseA2).toBeTypeOf("function");
    expect((await a.getSession("s"))?.lastSeq).toBe(2);
    expect(b.locks.parked).toEqual([]);
    await releaseA2?.();
  });

  it("aSessionInUseIsRefusedToAnotherHostAndLetGoWhenItsOperationEnds", async () => {
    const { a, b, free } = await cluster({ sessionLeaseMs: 60_000, sessionHandoverMs: 50 });
    const releaseA = await a.tryLockSession("s");
    expect(await b.tryLockSession("s")).toBeUndefined();
    // B asked: A does not keep the session as a lease when its operation ends.
    await releaseA?.();
    expect(a.locks.parked).toEqual([]);
    expect(await free("s")).toBe(true);
  });

  it("aLeaseIsLetGoAfterSessionLeaseMs", async () => {
    const { a, free } = await cluster({ sessionLeaseMs: 20 });
    const release = await a.tryLockSession("s");
    await release?.();
    await eventually("the lease to end", async () => a.locks.parked.length === 0 && (await free("s")));
  });

  it("withLeasesOffEveryLockIsLetGoWhenItsOperationEnds", async () => {
    const { a, free } = await cluster({ sessionLeaseMs: 0 });
    const release = await a.tryLockSession("s");
    expect(await free("s")).toBe(false);
    await release?.();
    expect(a.locks.parked).toEqual([]);
    expect(await free("s")).toBe(true);
  });

  it("theOldestParkedLeaseIsLetGoWhenEveryLockConnectionIsTaken", async () => {
    const { a, free } = await cluster({ sessionLeaseMs: 60_000, maxSessionLocks: 2 });
    for (const s of ["s1", "s2"]) await (await a.tryLockSession(s))?.();
    expect(a.locks.parked).toEqual(["s1", "s2"]);
    const release3 = await a.tryLockSession("s3");
    expect(release3).toBeTypeOf("function");
    expect(a.locks.parked).toEqual(["s2"]);
    expect(await free("s1")).toBe(true);
    expect(await free("s2")).toBe(false);
    // Nothing parked and every connection in use: refused, never queued.
    const release2 = await a.tryLockSession("s2");
    await expect(a.tryLockSession("s4")).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    await release2?.();
    await release3?.();
  });

  it("aFailedWriteUnderALockLetsItGoInsteadOfKeepingALease", async () => {
    const { a, b, free } = await cluster({ sessionLeaseMs: 60_000 });
    await a.append("s", 0, 0, inputEvent("first"));
    const release = await a.tryLockSession("s");
    expect((await a.head("s")).seq).toBe(1);
    // A writer that does not hold the lock (a host that lost it without noticing) moves the head.
    await b.append("s", 1, 0, inputEvent("stale host"));
    await expect(a.append("s", 1, 0, inputEvent("holder"))).rejects.toMatchObject({ code: ErrorCode.Conflict });
    await release?.();
    expect(a.locks.parked).toEqual([]);
    expect(await free("s")).toBe(true);
  });

  it("aWriteWhileTheLeaseIsParkedIsNotServedStaleToTheNextOperation", async () => {
    const { a, b } = await cluster({ sessionLeaseMs: 60_000 });
    await a.append("s", 0, 0, inputEvent("first"));
    const first = await a.tryLockSession("s");
    expect((await a.getSession("s"))?.lastSeq).toBe(1);
    await first?.();
    expect(a.locks.parked).toEqual(["s"]);
    // This host writes the session outside any operation (no lock taken): what it knew is dropped.
    await a.append("s", 1, 0, inputEvent("outside an operation"));
    const release = await a.tryLockSession("s");
    expect(await a.getSession("s")).toEqual(await b.getSession("s"));
    expect((await a.head("s")).seq).toBe(2);
    await release?.();
  });

  it("losingTheListeningConnectionLetsEveryParkedLeaseGo", async () => {
    const { a, free } = await cluster({ sessionLeaseMs: 60_000 });
    for (const s of ["s1", "s2"]) await (await a.tryLockSession(s))?.();
    expect(a.locks.parked).toEqual(["s1", "s2"]);
    // Without its listening connection the host would not hear another host ask: it keeps no lease.
    const pid = a.listener.backendPid;
    expect(pid).toBeTypeOf("number");
    const killed = await raws[0]!.query<{ ok: boolean }>("SELECT pg_terminate_backend($1) AS ok", [pid]);
    expect(killed.rows[0]?.ok).toBe(true);
    await eventually(
      "the parked leases to be let go",
      async () => a.locks.parked.length === 0 && (await free("s1")) && (await free("s2")),
    );
  });

  it("manySessionsShareAFewLockConnections", async () => {
    const { a } = await cluster({ sessionLockConnections: 2 });
    const sessions = Array.from({ length: 20 }, (_, i) => `s${i}`);
    const releases = await Promise.all(sessions.map((s) => a.tryLockSession(s)));
    expect(releases.every((r) => typeof r === "function")).toBe(true);
    const keys = sessions.map((s) => sessionLockKey(a.schema ?? "", s));
    const holders = await raws[0]!.query<{ pid: number }>(
      `SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
         AND ((classid::bigint << 32) | objid::bigint) = ANY($1::bigint[])`,
      [keys],
    );
    expect(holders.rows.length).toBeGreaterThan(0);
    expect(holders.rows.length).toBeLessThanOrEqual(2);
    for (const release of releases) await release?.();
  });

  it("aLockConnectionThatDiesTakesItsLeasesWithIt", async () => {
    const { a, b } = await cluster({ sessionLeaseMs: 60_000, sessionLockConnections: 1 });
    for (const s of ["s1", "s2"]) await (await a.tryLockSession(s))?.();
    expect(a.locks.parked).toEqual(["s1", "s2"]);
    const key = sessionLockKey(a.schema ?? "", "s1");
    const holder = await raws[0]!.query<{ pid: number }>(
      "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND ((classid::bigint << 32) | objid::bigint) = $1::bigint",
      [key],
    );
    const pid = holder.rows[0]?.pid;
    expect(pid).toBeTypeOf("number");
    await raws[0]!.query("SELECT pg_terminate_backend($1)", [pid]);
    await eventually("the dead connection's leases to go", () => a.locks.parked.length === 0);
    // Another host takes both at once; this host locks again on a new connection.
    const taken = await Promise.all(["s1", "s2"].map((s) => b.tryLockSession(s)));
    expect(taken.every((r) => typeof r === "function")).toBe(true);
    for (const release of taken) await release?.();
    const again = await a.tryLockSession("s1");
    expect(again).toBeTypeOf("function");
    await again?.();
  });

  it("theJournalUrlCarriesTheLockOptionsAndABadOneIsRefusedNamingIt", async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const j = await PostgresJournal.open(`${PG_URL}?schema=${schema}&session_lease_ms=0&session_lock_connections=1`);
    open.push(j);
    await (await j.tryLockSession("s"))?.();
    expect(j.locks.parked).toEqual([]);
    for (const bad of ["session_lease_ms=soon", "max_session_locks=-1", "session_handover_ms=1.5"]) {
      await expect(PostgresJournal.open(`${PG_URL}?schema=${schema}&${bad}`)).rejects.toMatchObject({
        code: ErrorCode.InvalidArgument,
        message: expect.stringContaining(bad.split("=")[0]!),
      });
    }
    await expect(PostgresJournal.open(`${PG_URL}?schema=${schema}&max_session_locks=0`)).rejects.toMatchObject({
      code: ErrorCode.InvalidArgument,
      message: expect.stringContaining("maxSessionLocks"),
    });
  });

  it("theSessionLocksGaugeCountsLocksInUseAndParked", async () => {
    const { a } = await cluster({ sessionLeaseMs: 60_000 });
    const metrics = new HostMetrics();
    metrics.countSessionLocksWith(() => a.sessionLockCounts());
    const scraped = async (state: string) =>
      sampleValue(parseExposition(await metrics.render()), "harnesshost_session_locks", { state });
    const inUse = await a.tryLockSession("s1");
    await (await a.tryLockSession("s2"))?.();
    expect(a.sessionLockCounts()).toEqual({ inUse: 1, parked: 1 });
    expect([await scraped("in_use"), await scraped("parked")]).toEqual([1, 1]);
    await inUse?.();
    expect([await scraped("in_use"), await scraped("parked")]).toEqual([0, 2]);
  });

  it("aLockTakenAfterItsConnectionWasReplacedIsHeldThereAndLetGoThere", async () => {
    const { a, b, free } = await cluster({
      sessionLeaseMs: 60_000,
      sessionHandoverMs: 30_000,
      sessionLockConnections: 1,
    });
    const raw = raws[0]!;
    const releaseA = await a.tryLockSession("s");
    await (await b.tryLockSession("warm"))?.();
    const [pid] = b.locks.lanePids;
    expect(pid).toBeTypeOf("number");
    const taking = b.tryLockSession("s");
    // B asked and is retrying: its connection's last statement is a plain try.
    await eventually("B to be retrying", async () => {
      const row = await raw.query<{ query: string }>("SELECT query FROM pg_stat_activity WHERE pid = $1", [pid]);
      return row.rows[0]?.query.startsWith("SELECT pg_try_advisory_lock") === true;
    });
    // The connection dies under B's wait; B's next try runs on a new one, and is granted once A lets go.
    await raw.query("SELECT pg_terminate_backend($1)", [pid]);
    await eventually("B's connection to be replaced", () => b.locks.lanePids[0] !== pid);
    await releaseA?.();
    const releaseB = await taking;
    expect(releaseB).toBeTypeOf("function");
    await releaseB?.();
    // B holds it as a lease on the new connection, and lets it go there when asked.
    const again = await a.tryLockSession("s");
    expect(again).toBeTypeOf("function");
    await again?.();
    await a.close();
    await b.close();
    expect(await free("s")).toBe(true);
  });

  it("aWriteStillInFlightWhenTheOperationEndsIsNotServedStaleByTheNextOne", async () => {
    const { a, b } = await cluster({ sessionLeaseMs: 60_000 });
    await a.append("s", 0, 0, inputEvent("first"));
    const release = await a.tryLockSession("s");
    expect((await a.head("s")).seq).toBe(1);
    // The operation ends (its lease parks) before its last write has committed.
    const writing = a.append("s", 1, 0, inputEvent("in flight"));
    await release?.();
    expect(a.locks.parked).toEqual(["s"]);
    await writing;
    const next = await a.tryLockSession("s");
    expect((await a.head("s")).seq).toBe(2);
    expect(await a.getSession("s")).toEqual(await b.getSession("s"));
    await next?.();
  });

  it("aLockStatementThatHangsGivesUpItsConnectionInsteadOfStallingItsSessions", async () => {
    const { a } = await cluster({ sessionLockStatementTimeoutMs: 200, sessionLockConnections: 1 });
    const blocker = raws[0]!;
    // A migration holds the sessions table: the row read that comes with a lock waits behind it.
    await blocker.query("BEGIN");
    await blocker.query("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE");
    try {
      await expect(a.tryLockSession("s")).rejects.toMatchObject({ code: ErrorCode.Unavailable });
      expect(a.locks.lanePids).toEqual([]);
    } finally {
      await blocker.query("ROLLBACK");
    }
    // The given-up backend ends once its wait does, and the session can be locked again.
    await eventually("the session to be free again", async () => {
      const release = await a.tryLockSession("s").catch(() => undefined);
      await release?.();
      return release !== undefined;
    });
  });
});
