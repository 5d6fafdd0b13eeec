// A host that lost a session cannot append: two Hosts in this process share one schema; host A holds a
// turn inside its harness, its advisory-lock connection is killed (as when its network drops), host B
// takes the session and mints a newer fence, and A's turn — carrying on — is refused (ABORTED), leaving
// nothing after B's fence. The session then carries on from B, and from A once it asks again.
import { resolve } from "node:path";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { textMessage } from "../../src/controller/events.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { Host } from "../../src/host/host.js";
import { sessionLockKey } from "../../src/journal/postgres/lock.js";
import { dropSchemas } from "../journal/postgres-fixture.js";
import { PG_URL, journalUrl, mhSchema } from "./cluster.js";
import { Gate, gates } from "./fixtures/gated-echo.js";
import { expectSound } from "./journal-checks.js";

const GATED = resolve(import.meta.dirname, "fixtures/gated-echo.ts");
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  gates.current = undefined;
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function openHost(schema: string): Promise<Host> {
  const dir = mkdtempSync(join(tmpdir(), "hh-mh-stale-"));
  const host = await Host.open({
    dataDir: dir,
    journal: journalUrl(schema),
    harnesses: [{ name: "gated", runtime: "local", target: GATED, checkpointPolicy: "every-turn", descriptorId: "" }],
  });
  cleanups.push(async () => {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return host;
}

/** Ends the PostgreSQL backend holding the session's advisory lock (its key split as pg_locks shows it). */
async function killLockHolder(schema: string, session: string): Promise<number> {
  const key = BigInt.asUintN(64, BigInt(sessionLockKey(schema, session)));
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const res = await client.query<{ ok: boolean }>(
      "SELECT pg_terminate_backend(pid) AS ok FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = $1 AND objid = $2 AND objsubid = 1",
      [(key >> 32n).toString(), (key & 0xffffffffn).toString()],
    );
    return res.rows.filter((r) => r.ok).length;
  } finally {
    await client.end();
  }
}

const input = (t: string) => [textMessage("user", t)];

describe("a stale host", () => {
  it("that lost its session lock is fenced out by the host that took the session over", async () => {
    const schema = mhSchema();
    cleanups.push(() => dropSchemas([schema]));
    const a = await openHost(schema);
    const b = await openHost(schema);
    const signal = new AbortController().signal;
    const session = (await a.createSession({ harness: "gated" })).uid;
    await a.placer.exec({ session, inputs: input("one"), signal });

    const gate = new Gate();
    gates.current = gate;
    const stale = a.placer.exec({ session, inputs: input("two"), signal });
    const staleOutcome = stale.then(
      () => "completed",
      (err: unknown) => err,
    );
    await gate.entered; // A has written EXECUTION_START + INPUT and is inside the harness
    await expect(b.placer.exec({ session, inputs: input("busy"), signal })).rejects.toSatisfy((e) =>
      isHostError(e, ErrorCode.SessionBusy),
    );

    expect(await killLockHolder(schema, session)).toBe(1);
    // B takes the session and mints a newer fence; its own turn is refused by CAS, so the head is
    // where A left it and only the fence can stop A.
    await expect(b.placer.exec({ session, inputs: input("cas"), expectedLastSeq: 1, signal })).rejects.toSatisfy((e) =>
      isHostError(e, ErrorCode.Conflict),
    );
    const head = await b.journal.head(session);
    gate.open();
    expect(await staleOutcome).toSatisfy((e) => isHostError(e, ErrorCode.Fenced));
    expect(await b.journal.head(session)).toEqual(head); // A appended nothing more

    gates.current = undefined;
    const next = await b.placer.exec({ session, inputs: input("three"), signal });
    expect(next.outputs).toEqual(["echo:three"]);
    const again = await a.placer.exec({ session, inputs: input("four"), signal });
    expect(again.outputs).toEqual(["echo:four"]);
    await expectSound(b.journal, [session]);
  });
});
