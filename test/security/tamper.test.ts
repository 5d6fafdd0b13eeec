// Tamper (docs/protocol.md §5.2, §5.7): any edit of a stored record — a byte of its event, its prev_hash or content_hash,
// or a deleted row — is found by verify, which names the seq, and Exec, Resume, Suspend and Fork of the
// tampered session are refused with DATA_LOSS naming that seq, changing nothing; Replay is refused the same way
// (`harnesshost replay`, which re-executes the harness) before any harness runs (replayOfATamperedSessionIsRefused). Other sessions,
// including a fork child made before the edit, are unaffected.
import { join } from "node:path";
import type Database from "better-sqlite3";
import { openSqlite } from "../../src/journal/sqlite/driver.js";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { fromBinary, toJson } from "@bufbuild/protobuf";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { codeOf, drain, startFixture, userInput, type Fixture } from "../server/helpers.js";
import { jcs } from "../../src/canon/index.js";
import { EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { HEAD_ROW_SEQ } from "../../src/journal/sqlite/schema.js";
import { RpcError } from "../../src/wire/index.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

type Edit = (db: Database.Database, session: string, seq: number) => void;

const EDITS: Record<string, Edit> = {
  "a flipped byte in the event": (db, s, seq) => {
    const row = db
      .prepare<[string, number], { event: Buffer }>("SELECT event FROM events WHERE session = ? AND seq = ?")
      .get(s, seq)!;
    const bytes = Buffer.from(row.event);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x01;
    db.prepare("UPDATE events SET event = ? WHERE session = ? AND seq = ?").run(bytes, s, seq);
  },
  "an edited prev_hash": (db, s, seq) =>
    void db.prepare("UPDATE events SET prev_hash = ? WHERE session = ? AND seq = ?").run("0".repeat(64), s, seq),
  "an edited content_hash": (db, s, seq) =>
    void db.prepare("UPDATE events SET content_hash = ? WHERE session = ? AND seq = ?").run("f".repeat(64), s, seq),
  "a deleted row": (db, s, seq) => void db.prepare("DELETE FROM events WHERE session = ? AND seq = ?").run(s, seq),
};

function edit(f: Fixture, session: string, seq: number, how: Edit): void {
  const db = openSqlite(join(f.dir, "journal.db"));
  try {
    how(db, session, seq);
  } finally {
    db.close();
  }
}

async function sessionWithTurns(f: Fixture, n: number): Promise<string> {
  let uid = "";
  for (let i = 0; i < n; i++) {
    const { items, error } = await drain(f.sessions.exec({ session: uid, inputs: [userInput(`turn ${i}`)] }));
    expect(error).toBeUndefined();
    if (uid === "" && items[0]?.update.case === "session") uid = items[0].update.value.metadata?.uid ?? "";
  }
  return uid;
}

async function refusal(p: Promise<unknown>): Promise<RpcError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof RpcError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("tampered journal", () => {
  for (const [what, how] of Object.entries(EDITS)) {
    it(`${what} is named by verify, and Exec/Resume/Suspend/Fork are refused DATA_LOSS`, async () => {
      const f = (fx = await startFixture());
      const uid = await sessionWithTurns(f, 2);
      const head = Number((await f.sessions.getSession({ uid })).lastSeq);
      const [child] = (await f.sessions.fork({ session: uid, count: 1 })).children;
      const other = await sessionWithTurns(f, 1);
      const seq = 3;
      edit(f, uid, seq, how);
      await f.restart();

      const verdict = await f.host.journal.verify(uid);
      expect(verdict.ok).toBe(false);
      if (!verdict.ok) expect(verdict.seq).toBe(seq);

      const exec = await drain(f.sessions.exec({ session: uid, inputs: [userInput("after")] }));
      expect(exec.error?.grpcCode).toBe(GrpcStatus.DATA_LOSS);
      expect(exec.error?.details).toContain(`seq ${seq}`);
      // replayOfATamperedSessionIsRefused: re-executing a tampered log (`harnesshost replay`, Placer.replay)
      // would compare the harness against forged events. (The wire Replay RPC is a read of the records.)
      const replay = await f.host.placer.replay(uid, new AbortController().signal).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isHostError(replay, ErrorCode.DataLoss)).toBe(true);
      expect(String((replay as Error).message)).toContain(`seq ${seq}`);
      for (const p of [
        f.sessions.resume({ session: uid }),
        f.sessions.suspend({ session: uid }),
        f.sessions.fork({ session: uid, count: 1 }),
      ]) {
        const err = await refusal(p);
        expect(err.grpcCode).toBe(GrpcStatus.DATA_LOSS);
        expect(err.details).toContain(`seq ${seq}`);
      }
      expect(Number((await f.sessions.getSession({ uid })).lastSeq)).toBe(head);
      expect((await f.host.journal.allSessionUids()).length).toBe(3);

      // Nothing else is affected: the child copied its prefix before the edit; the other session is separate.
      for (const s of [child!.metadata!.uid, other]) {
        expect((await drain(f.sessions.exec({ session: s, inputs: [userInput("still fine")] }))).error).toBeUndefined();
        expect(await f.host.journal.verify(s)).toMatchObject({ ok: true });
      }
    });
  }

  it("a tamper made while the host runs is caught on the session's first operation", async () => {
    const f = (fx = await startFixture());
    const uid = await sessionWithTurns(f, 1);
    await f.restart();
    edit(f, uid, 2, EDITS["an edited content_hash"]!);
    expect(await codeOf(f.sessions.resume({ session: uid }))).toBe(GrpcStatus.DATA_LOSS);
  });

  it("any byte of any stored event: verify names that seq (property)", async () => {
    const f = (fx = await startFixture());
    const uid = await sessionWithTurns(f, 2);
    const db = openSqlite(join(f.dir, "journal.db"));
    try {
      // Every stored record (not the session's head row, which carries no event).
      const rows = db
        .prepare<[string], { seq: number; event: Buffer }>(
          `SELECT seq, event FROM events WHERE session = ? AND seq < ${HEAD_ROW_SEQ} ORDER BY seq`,
        )
        .all(uid);
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: rows.length - 1 }),
          fc.nat(),
          fc.integer({ min: 1, max: 255 }),
          async (r, pos, xor) => {
            const row = rows[r]!;
            const bytes = Buffer.from(row.event);
            bytes[pos % bytes.length] = bytes[pos % bytes.length]! ^ xor;
            db.prepare("UPDATE events SET event = ? WHERE session = ? AND seq = ?").run(bytes, uid, row.seq);
            try {
              const verdict = await f.host.journal.verify(uid);
              // The hash covers the event's canonical proto3-JSON: a byte change that decodes to the same
              // canonical event (e.g. inside an unknown field) changes no meaning; any other is caught here.
              if (!verdict.ok) expect(verdict.seq).toBe(row.seq);
              else
                expect(jcs(toJson(EventSchema, fromBinary(EventSchema, bytes)))).toBe(
                  jcs(toJson(EventSchema, fromBinary(EventSchema, row.event))),
                );
            } finally {
              db.prepare("UPDATE events SET event = ? WHERE session = ? AND seq = ?").run(row.event, uid, row.seq);
            }
          },
        ),
        { numRuns: 60, seed: 99 },
      );
    } finally {
      db.close();
    }
    expect(await f.host.journal.verify(uid)).toMatchObject({ ok: true });
  });
});
