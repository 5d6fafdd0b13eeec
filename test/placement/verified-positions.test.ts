// A session's first touch in O(tail) (docs/protocol.md §5.9, src/placement/verified-positions.ts):
// a host stores the position its chain check verified a session through, with the projection there,
// at an END or SUSPEND every VERIFIED_POSITION_EVERY_RECORDS records; a later host's first touch
// verifies that position against its record and walks only the records after it. A position that
// does not match its records is refused — logged, counted — and the full walk takes over, so nothing
// is served from it; a crash between a record and its position loses nothing; a host told to distrust
// positions walks the whole chain.
import { join } from "node:path";
import { openSqlite } from "../../src/journal/sqlite/driver.js";
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { SessionLog } from "../../src/projection/session-log.js";
import { encodeProjection } from "../../src/projection/codec.js";
import { ErrorCode } from "../../src/errors/index.js";
import type { Host } from "../../src/host/index.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { openJournal } from "../../src/journal/index.js";
import { verifiedPositionDigest } from "../../src/journal/verified-position.js";
import type { Journal, VerifiedPosition } from "../../src/journal/types.js";
import { HostMetrics } from "../../src/obs/metrics.js";
import { VERIFIED_POSITION_EVERY_RECORDS } from "../../src/placement/verified-positions.js";
import { observedJournal } from "../fixtures/counting-journal.js";
import { closeAll, openTestHost, rejectsWithCode, signal, turn } from "../tiers/helpers.js";

afterEach(closeAll);

/** Echo turns are five records: enough of them that a position is due. */
const TURNS = Math.ceil(VERIFIED_POSITION_EVERY_RECORDS / 5) + 2;

/** `inner` with full walks and position reads counted and every ranged read logged as [from, to]. */
function watched(inner: Journal): {
  journal: Journal;
  walks: () => number;
  positionReads: () => number;
  reads: [number, number][];
} {
  let walks = 0;
  let positionReads = 0;
  const reads: [number, number][] = [];
  const journal = observedJournal(inner, (method, args) => {
    if (method === "verify") walks += 1;
    if (method === "verifiedPosition") positionReads += 1;
    if (method === "read" || method === "readRange") reads.push([Number(args[1] ?? 1), Number(args[2] ?? 0)]);
  });
  return { journal, walks: () => walks, positionReads: () => positionReads, reads };
}

/** A session with TURNS echo turns run by a host on `journal`, its position stored; the host stays open. */
async function grownSession(journal: Journal): Promise<{ host: Host; session: string; position: VerifiedPosition }> {
  const host = await openTestHost({}, { journal });
  const session = (await host.createSession({ harness: "echo" })).uid;
  for (let i = 0; i < TURNS; i++) await turn(host, session, `t${i}`);
  await host.placer.positionsIdle();
  const position = await journal.verifiedPosition(session);
  if (!position) throw new Error("no verified position was stored");
  return { host, session, position };
}

/** What placement asks of a projection, for comparing a served one with a full fold of the records. */
async function answers(log: SessionLog) {
  return {
    head: log.head,
    length: log.length,
    lastEndSeq: log.lastEndSeq,
    computeState: log.computeState,
    pending: log.pending()?.execution.executionId,
    suspend: log.lastOwnSuspend?.seq,
    pin: log.pinnedVersion,
    compaction: log.lastCompaction,
    hasTurns: log.hasTurns,
  };
}

async function fullFold(journal: Journal, session: string): Promise<SessionLog> {
  return SessionLog.of(await journal.readRange(session));
}

/** A journal whose stored position reads as `edit` makes it (a row changed in the database). */
function withPosition(inner: Journal, edit: (row: VerifiedPosition) => VerifiedPosition): Journal {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "verifiedPosition")
        return async (session: string) => {
          const row = await target.verifiedPosition(session);
          return row && edit(row);
        };
      return Reflect.get(target, prop, receiver);
    },
  });
}

/** A host logging warn lines into `lines`, with its metrics kept in `metrics`. */
async function loudHost(journal: Journal, config = {}) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const metrics = new HostMetrics();
  const host = await openTestHost(config, { journal, logger: pino({ level: "warn" }, sink), metrics });
  const counted = async (outcome: string) => {
    const text = await metrics.families.metrics();
    const m = text.match(new RegExp(`harnesshost_verified_positions_total\\{outcome="${outcome}"\\} (\\d+)`));
    return Number(m?.[1] ?? 0);
  };
  return { host, lines, counted };
}

describe("a session's first touch from its verified position", () => {
  it("aFirstTouchFromAStoredPositionVerifiesAndFoldsOnlyTheRecordsAfterIt", async () => {
    const shared = new MemoryJournal();
    const { host: a, session, position } = await grownSession(shared);
    expect(position.seq).toBeGreaterThanOrEqual(VERIFIED_POSITION_EVERY_RECORDS);
    // Two more turns: a tail after the position the next host must verify.
    await turn(a, session, "after-1");
    await turn(a, session, "after-2");
    const head = (await shared.head(session)).seq;
    expect(head).toBeGreaterThan(position.seq);

    const w = watched(shared);
    const { host: b, counted } = await loudHost(w.journal);
    await b.placer.suspend(session, signal());
    expect(w.walks()).toBe(0);
    // Nothing before the position is read: the position's own record and the tail are.
    expect(w.reads.length).toBeGreaterThan(0);
    for (const [from] of w.reads) expect(from).toBeGreaterThanOrEqual(position.seq);
    expect(await counted("used")).toBe(1);
    expect(await answers(await b.placer.sessionLog(session))).toEqual(await answers(await fullFold(shared, session)));
    // And the session goes on: a turn after the first touch sees every earlier turn.
    expect(await turn(b, session, "next")).toEqual(["echo:next"]);
  });

  it("aSessionShorterThanThePositionIntervalIsWalkedWithoutReadingAPosition", async () => {
    const shared = new MemoryJournal();
    const a = await openTestHost({}, { journal: shared });
    const session = (await a.createSession({ harness: "echo" })).uid;
    for (let i = 0; i < 3; i++) await turn(a, session, `t${i}`);
    expect((await shared.head(session)).seq).toBeLessThan(VERIFIED_POSITION_EVERY_RECORDS);
    const w = watched(shared);
    const b = await openTestHost({}, { journal: w.journal });
    expect(await turn(b, session, "next")).toEqual(["echo:next"]);
    expect(w.walks()).toBe(1);
    expect(w.positionReads()).toBe(0);
  });

  it("aHostThatDistrustsVerifiedPositionsWalksTheWholeChain", async () => {
    const shared = new MemoryJournal();
    const { session } = await grownSession(shared);
    const w = watched(shared);
    const b = await openTestHost({ distrustVerifiedPositions: true }, { journal: w.journal });
    await b.placer.suspend(session, signal());
    expect(w.walks()).toBe(1);
    expect(await answers(await b.placer.sessionLog(session))).toEqual(await answers(await fullFold(shared, session)));
  });

  const recomputed = (row: VerifiedPosition, change: Partial<VerifiedPosition>): VerifiedPosition => {
    const next = { ...row, ...change };
    return { ...next, digest: verifiedPositionDigest(next.session, next.seq, next.hash, next.projection) };
  };

  const REFUSALS: Record<
    string,
    (row: VerifiedPosition, records: Journal, session: string) => Promise<VerifiedPosition>
  > = {
    "a damaged digest": async (row) => ({ ...row, digest: `sha256:${"0".repeat(64)}` }),
    "a damaged projection byte": async (row) => {
      const projection = row.projection.slice();
      projection[projection.length - 2] = projection[projection.length - 2]! ^ 0x01;
      return { ...row, projection };
    },
    "a hash that is not the record's (digest recomputed)": async (row) => recomputed(row, { hash: "f".repeat(64) }),
    "a seq past the head (digest recomputed)": async (row, records, session) => {
      const head = await records.head(session);
      return recomputed(row, { seq: head.seq + 5 });
    },
    "a projection from an earlier seq (digest recomputed)": async (row, records, session) => {
      const earlier = SessionLog.lean();
      for (const r of await records.readRange(session, 1, row.seq - 5)) earlier.apply(r);
      return recomputed(row, { projection: encodeProjection(earlier)! });
    },
    "another session's position": async (row) => ({ ...row, session: "someone-else" }),
  };

  for (const [what, edit] of Object.entries(REFUSALS)) {
    it(`aPositionThatDoesNotMatchItsRecordsIsRefusedAndTheFullWalkTakesOver: ${what}`, async () => {
      const shared = new MemoryJournal();
      const { host: a, session, position } = await grownSession(shared);
      await turn(a, session, "after");
      const edited = await edit(position, shared, session);
      const w = watched(withPosition(shared, () => edited));
      const { host: b, lines, counted } = await loudHost(w.journal);
      await b.placer.suspend(session, signal());
      expect(w.walks()).toBe(1);
      expect(await counted("refused")).toBe(1);
      expect(await counted("used")).toBe(0);
      expect(lines.some((l) => l.includes("stored verified position refused") && l.includes(session))).toBe(true);
      // Nothing was served from the refused position: the projection is the fold of the records.
      expect(await answers(await b.placer.sessionLog(session))).toEqual(await answers(await fullFold(shared, session)));
    });
  }
});

describe("positions and tampered or lost records (SQLite)", () => {
  async function sqliteSession(): Promise<{ dir: string; session: string; position: VerifiedPosition }> {
    const a = await openTestHost();
    const session = (await a.createSession({ harness: "echo" })).uid;
    for (let i = 0; i < TURNS; i++) await turn(a, session, `t${i}`);
    await a.placer.positionsIdle();
    const position = await a.journal.verifiedPosition(session);
    if (!position) throw new Error("no verified position was stored");
    await turn(a, session, "after");
    const dir = a.config.dataDir;
    await a.close();
    return { dir, session, position };
  }

  function flipEventByte(dir: string, session: string, seq: number): void {
    const db = openSqlite(join(dir, "journal.db"));
    try {
      const row = db
        .prepare<[string, number], { event: Buffer }>("SELECT event FROM events WHERE session = ? AND seq = ?")
        .get(session, seq)!;
      const bytes = Buffer.from(row.event);
      bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x01;
      db.prepare("UPDATE events SET event = ? WHERE session = ? AND seq = ?").run(bytes, session, seq);
    } finally {
      db.close();
    }
  }

  for (const [what, offset] of [
    ["the position's own record", 0],
    ["a record after the position", 2],
  ] as const) {
    it(`aTamperedRecordAtOrAfterThePositionIsRefusedDataLoss: ${what}`, async () => {
      const { dir, session, position } = await sqliteSession();
      flipEventByte(dir, session, position.seq + offset);
      const b = await openTestHost({ dataDir: dir });
      await rejectsWithCode(turn(b, session, "x"), ErrorCode.DataLoss);
    });
  }

  it("aTamperedRecordBeforeThePositionIsFoundByVerifyAndByAHostThatDistrustsPositions", async () => {
    const { dir, session, position } = await sqliteSession();
    flipEventByte(dir, session, position.seq - 10);
    const journal = await openJournal(join(dir, "journal.db"));
    try {
      expect(await journal.verify(session)).toMatchObject({ ok: false, seq: position.seq - 10 });
    } finally {
      await journal.close();
    }
    const b = await openTestHost({ dataDir: dir, distrustVerifiedPositions: true });
    await rejectsWithCode(turn(b, session, "x"), ErrorCode.DataLoss);
  });

  it("aCrashBetweenARecordAndItsPositionLosesNothing", async () => {
    // Every position store fails, as a crash after the END committed and before its position did.
    const dir = (await openTestHost()).config.dataDir;
    const inner = await openJournal(join(dir, "journal.db"));
    const crashing = new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === "putVerifiedPosition") return async () => Promise.reject(new Error("crashed before commit"));
        return Reflect.get(target, prop, receiver);
      },
    });
    const a = await openTestHost({ dataDir: dir }, { journal: crashing });
    const session = (await a.createSession({ harness: "echo" })).uid;
    const outputs: string[] = [];
    for (let i = 0; i < TURNS; i++) outputs.push(...(await turn(a, session, `t${i}`)));
    await a.placer.positionsIdle();
    expect(await inner.verifiedPosition(session)).toBeUndefined();
    const head = await inner.head(session);
    await a.close();

    const w = watched(await openJournal(join(dir, "journal.db")));
    const b = await openTestHost({ dataDir: dir }, { journal: w.journal });
    expect(await turn(b, session, "next")).toEqual(["echo:next"]);
    expect(w.walks()).toBe(1);
    const records = await w.journal.readRange(session);
    expect(records.slice(0, head.seq).at(-1)?.contentHash).toBe(head.hash);
    expect(outputs).toHaveLength(TURNS);
    // The turn b ran stored a position (its END was due), from the full walk's projection.
    await b.placer.positionsIdle();
    expect((await w.journal.verifiedPosition(session))?.seq).toBe((await w.journal.head(session)).seq);
  });
});
