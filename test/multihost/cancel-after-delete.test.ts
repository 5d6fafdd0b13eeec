// A Cancel that read a session, then waited for its lock while another host deleted it, finds nothing
// to act on (docs/protocol.md §17, §18): the deleted session stays deleted — nothing the Cancel does
// once it holds the lock (a fence mint, an append) brings its row back, and it answers "nothing to do".
// The multi-host model test found a Delete answered OK while a Cancel of the same session ran on
// another host, and the session back in the journal afterwards (empty). The first test is the race as
// the locks order it; the second is the one that brought the row back: the Cancel's lock was lost (its
// lock connection terminated) while it stood before its fence mint, another host deleted the session,
// and the mint — which created a missing row — recreated it. A write for a uid with no row is now
// NOT_FOUND (docs/protocol.md §18 rule 8).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { textMessage } from "../../src/controller/events.js";
import { Host, type HostOverrides } from "../../src/host/host.js";
import { openJournal } from "../../src/journal/open.js";
import { gatedJournal } from "../fixtures/gated-journal.js";
import type { PostgresJournal } from "../../src/journal/postgres/journal.js";
import { dropSchemas, PG_URL } from "../journal/postgres-fixture.js";
import { eventually, journalUrl, mhSchema } from "./cluster.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function openHost(schema: string, overrides: HostOverrides = {}): Promise<Host> {
  const dir = mkdtempSync(join(tmpdir(), "hh-mh-cad-"));
  const host = await Host.open({ dataDir: dir, journal: journalUrl(schema) }, overrides);
  cleanups.push(async () => {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return host;
}

describe("Cancel racing a Delete on another host", () => {
  it("aCancelThatGetsTheLockAfterAnotherHostsDeleteLeavesTheSessionDeleted", async () => {
    const schema = mhSchema();
    cleanups.push(() => dropSchemas([schema]));
    // Host B's lock call waits at a gate: B's Cancel has read the session, A's Delete runs meanwhile.
    const gated = gatedJournal(await openJournal(journalUrl(schema)), "tryLockSession");
    const a = await openHost(schema);
    const b = await openHost(schema, { journal: gated.journal });
    const s = (await a.createSession({ harness: "ask" })).uid;
    // B runs the turn, so B's caches hold the session parked on its own open gate.
    await b.placer.exec({ session: s, inputs: [textMessage("user", "hello")], signal: new AbortController().signal });
    const locking = gated.arm();
    const cancel = b.placer.cancel({ session: s, reason: "late" }).then(
      (outcome) => outcome,
      (e: unknown) => e,
    );
    await locking;
    await a.placer.delete(s);
    gated.open();
    expect(await cancel).toBe("idle");
    expect(await a.journal.getSession(s)).toBeUndefined();
    expect(await b.journal.getSession(s)).toBeUndefined();
  });

  // docs/protocol.md §18 rule 8: a deleted session stays deleted, even against a host whose lock was lost.
  it("aCancelWhoseLockWasLostWhileAnotherHostDeletedTheSessionDoesNotBringItBack", async () => {
    const schema = mhSchema();
    cleanups.push(() => dropSchemas([schema]));
    const pgB = (await openJournal(journalUrl(schema))) as PostgresJournal;
    // Host B's fence mint waits at a gate: its Cancel holds the session and is about to withdraw a wait.
    const gated = gatedJournal(pgB, "newFence");
    const a = await openHost(schema);
    const b = await openHost(schema, { journal: gated.journal });
    const s = (await a.createSession({ harness: "ask" })).uid;
    // B runs the turn: it parks on its own open gate, which B's Cancel then withdraws (a mint, an append).
    await b.placer.exec({ session: s, inputs: [textMessage("user", "hello")], signal: new AbortController().signal });
    const minting = gated.arm();
    const cancel = b.placer.cancel({ session: s, reason: "late" }).then(
      (outcome) => outcome,
      (e: unknown) => e,
    );
    await minting;
    // B loses its lock: its lock connections end (a fault the model test injects), the server frees it.
    const raw = new pg.Client({ connectionString: PG_URL });
    await raw.connect();
    try {
      const pids = pgB.locks.lanePids;
      await raw.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [pids]);
      await eventually("B's lock connections are gone", async () => {
        const left = await raw.query("SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1::int[])", [pids]);
        return left.rowCount === 0;
      });
    } finally {
      await raw.end();
    }
    await a.placer.delete(s);
    gated.open();
    const answer = await cancel;
    expect(isHostError(answer, ErrorCode.NotFound), String(answer)).toBe(true);
    expect(await a.journal.getSession(s)).toBeUndefined();
    expect(await b.journal.getSession(s)).toBeUndefined();
  });
});
