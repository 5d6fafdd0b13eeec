// Verified positions on PostgreSQL (docs/protocol.md §5.9), hosts sharing one schema: a later host's
// first touch starts from the stored position and verifies only the records after it; a position row
// changed behind the journal's back (a damaged projection byte, or a stale seq and hash with the digest
// recomputed) is refused — logged, counted — and the full walk takes over, so nothing is served from
// it; a record after the position changed by raw SQL is DATA_LOSS; and a crash between a record and its
// position loses nothing.
import { Writable } from "node:stream";
import pino from "pino";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { SessionLog } from "../../src/projection/session-log.js";
import { ErrorCode } from "../../src/errors/index.js";
import type { Host } from "../../src/host/index.js";
import { PostgresJournal } from "../../src/journal/postgres/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { verifiedPositionDigest } from "../../src/journal/verified-position.js";
import { HostMetrics } from "../../src/obs/metrics.js";
import { VERIFIED_POSITION_EVERY_RECORDS } from "../../src/placement/verified-positions.js";
import { observedJournal } from "../fixtures/counting-journal.js";
import { closeAll, openTestHost, rejectsWithCode, signal, turn } from "../tiers/helpers.js";
import { dropSchemas, freshSchema, PG_URL, rawClient } from "./postgres-fixture.js";

const TURNS = Math.ceil(VERIFIED_POSITION_EVERY_RECORDS / 5) + 2;
const schemas: string[] = [];
afterEach(closeAll);
afterAll(async () => {
  await dropSchemas(schemas.splice(0));
});

/** A host on `schema` (its own pool), warn lines kept, full walks and position uses counted. */
async function hostOn(schema: string, wrap: (j: Journal) => Journal = (j) => j) {
  let walks = 0;
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const inner = wrap(await PostgresJournal.open(PG_URL, { schema, poolSize: 4 }));
  const journal = observedJournal(inner, (method) => {
    if (method === "verify") walks += 1;
  });
  const metrics = new HostMetrics();
  const host = await openTestHost({}, { journal, logger: pino({ level: "warn" }, sink), metrics });
  const counted = async (outcome: string): Promise<number> => {
    const text = await metrics.families.metrics();
    const m = text.match(new RegExp(`harnesshost_verified_positions_total\\{outcome="${outcome}"\\} (\\d+)`));
    return Number(m?.[1] ?? 0);
  };
  return { host, journal, lines, counted, walks: () => walks };
}

/** A schema with a session of TURNS echo turns, its position stored, and one turn after it. */
async function grown(): Promise<{ schema: string; session: string; positionSeq: number }> {
  const schema = freshSchema();
  schemas.push(schema);
  const { host, journal } = await hostOn(schema);
  const session = (await host.createSession({ harness: "echo" })).uid;
  for (let i = 0; i < TURNS; i++) await turn(host, session, `t${i}`);
  await host.placer.positionsIdle();
  const position = await journal.verifiedPosition(session);
  if (!position) throw new Error("no verified position was stored");
  await turn(host, session, "after");
  await host.close();
  return { schema, session, positionSeq: position.seq };
}

async function projectionAnswers(host: Host, journal: Journal, session: string) {
  const served = await host.placer.sessionLog(session);
  const folded = SessionLog.of(await journal.readRange(session));
  const of = (log: SessionLog) => ({
    head: log.head,
    lastEndSeq: log.lastEndSeq,
    pending: log.pending()?.execution.executionId,
    pin: log.pinnedVersion,
  });
  expect(of(served)).toEqual(of(folded));
}

async function sql(schema: string, text: string, values: unknown[] = []): Promise<void> {
  const raw = await rawClient(schema);
  try {
    await raw.query(text, values);
  } finally {
    await raw.end();
  }
}

describe("verified positions on PostgreSQL", () => {
  it("aFirstTouchOnPostgresStartsFromTheStoredPosition", async () => {
    const { schema, session } = await grown();
    const b = await hostOn(schema);
    await b.host.placer.suspend(session, signal());
    expect(b.walks()).toBe(0);
    expect(await b.counted("used")).toBe(1);
    await projectionAnswers(b.host, b.journal, session);
  });

  const EDITS: Record<string, (schema: string, session: string, seq: number) => Promise<void>> = {
    "a damaged projection byte": (schema, session) =>
      sql(
        schema,
        "UPDATE verified_positions SET projection = set_byte(projection, 20, get_byte(projection, 20) # 1) WHERE session = $1",
        [session],
      ),
    "a stale seq and hash (digest recomputed)": async (schema, session, seq) => {
      const j = await PostgresJournal.open(PG_URL, { schema, poolSize: 1 });
      try {
        const row = (await j.verifiedPosition(session))!;
        const earlier = (await j.readRange(session, seq - 5, seq - 5))[0]!;
        const digest = verifiedPositionDigest(session, earlier.seq, earlier.contentHash, row.projection);
        await sql(schema, "UPDATE verified_positions SET seq = $2, hash = $3, digest = $4 WHERE session = $1", [
          session,
          earlier.seq,
          earlier.contentHash,
          digest,
        ]);
      } finally {
        await j.close();
      }
    },
  };

  for (const [what, edit] of Object.entries(EDITS)) {
    it(`aPositionRowChangedOnPostgresIsRefusedAndTheFullWalkTakesOver: ${what}`, async () => {
      const { schema, session, positionSeq } = await grown();
      await edit(schema, session, positionSeq);
      const b = await hostOn(schema);
      await b.host.placer.suspend(session, signal());
      expect(b.walks()).toBe(1);
      expect(await b.counted("refused")).toBe(1);
      expect(await b.counted("used")).toBe(0);
      expect(b.lines.some((l) => l.includes("stored verified position refused") && l.includes(session))).toBe(true);
      await projectionAnswers(b.host, b.journal, session);
    });
  }

  it("aRecordAfterThePositionChangedOnPostgresIsDataLoss", async () => {
    const { schema, session, positionSeq } = await grown();
    await sql(
      schema,
      "UPDATE events SET event = set_byte(event, length(event) - 1, get_byte(event, length(event) - 1) # 1) WHERE session = $1 AND seq = $2",
      [session, positionSeq + 2],
    );
    const b = await hostOn(schema);
    await rejectsWithCode(turn(b.host, session, "x"), ErrorCode.DataLoss);
  });

  it("aCrashBetweenARecordAndItsPositionLosesNothingOnPostgres", async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const crashing = (j: Journal): Journal =>
      new Proxy(j, {
        get(target, prop, receiver) {
          if (prop === "putVerifiedPosition") return async () => Promise.reject(new Error("crashed before commit"));
          return Reflect.get(target, prop, receiver);
        },
      });
    const a = await hostOn(schema, crashing);
    const session = (await a.host.createSession({ harness: "echo" })).uid;
    for (let i = 0; i < TURNS; i++) expect(await turn(a.host, session, `t${i}`)).toEqual([`echo:t${i}`]);
    await a.host.placer.positionsIdle();
    const head = await a.journal.head(session);
    await a.host.close();

    const b = await hostOn(schema);
    expect(await b.journal.verifiedPosition(session)).toBeUndefined();
    expect(await turn(b.host, session, "next")).toEqual(["echo:next"]);
    expect(b.walks()).toBe(1);
    const records = await b.journal.readRange(session);
    expect(records[head.seq - 1]?.contentHash).toBe(head.hash);
    await b.host.placer.positionsIdle();
    expect((await b.journal.verifiedPosition(session))?.seq).toBe((await b.journal.head(session)).seq);
  });
});
