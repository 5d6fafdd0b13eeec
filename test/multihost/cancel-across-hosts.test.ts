// Cancel across hosts sharing one PostgreSQL schema (docs/protocol.md §17.2): two Hosts in this process,
// each with its own journal connections; host A holds a turn inside its model call (which honours the
// turn's signal), host B's Cancel reaches
// it through the journal (NOTIFY), A's turn fails CANCELLED with ERROR{CANCELLED} recorded, and B can
// then resume the session. B's Delete of a session A is running is refused; once cancelled it succeeds.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { textMessage } from "../../src/controller/events.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Host, type HostOverrides } from "../../src/host/host.js";
import { dropSchemas } from "../journal/postgres-fixture.js";
import { journalUrl, mhSchema } from "./cluster.js";
import { gatedEchoModel } from "../server/helpers.js";
import { expectSound } from "./journal-checks.js";
import { openJournal } from "../../src/journal/open.js";
import { gatedJournal } from "../fixtures/gated-journal.js";
import { childMetas } from "../tiers/helpers.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function openHost(schema: string, overrides: HostOverrides = {}): Promise<Host> {
  const dir = mkdtempSync(join(tmpdir(), "hh-mh-cancel-"));
  const host = await Host.open({ dataDir: dir, journal: journalUrl(schema) }, overrides);
  cleanups.push(async () => {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return host;
}

/** Host A (whose model calls wait for `gate`) and host B on one fresh schema. */
async function twoHosts(): Promise<{ a: Host; b: Host; gate: ReturnType<typeof gatedEchoModel> }> {
  const schema = mhSchema();
  cleanups.push(() => dropSchemas([schema]));
  const gate = gatedEchoModel();
  const a = await openHost(schema, { model: gate.model });
  const b = await openHost(schema);
  return { a, b, gate };
}

const input = (t: string) => [textMessage("user", t)];

/** Starts a turn on `host` and resolves once it waits inside its model call. */
async function heldTurn(
  host: Host,
  session: string,
  gate: ReturnType<typeof gatedEchoModel>,
): Promise<{ turn: Promise<unknown> }> {
  const turn: Promise<unknown> = host.placer.exec({
    session,
    inputs: input("held"),
    signal: new AbortController().signal,
  });
  turn.catch(() => undefined);
  await gate.entered;
  return { turn };
}

describe("Cancel across hosts", () => {
  it("cancelReachesATurnRunningOnAnotherHost: ERROR{CANCELLED} is recorded and the other host resumes it", async () => {
    const { a, b, gate } = await twoHosts();
    const s = (await a.createSession({})).uid;
    const { turn } = await heldTurn(a, s, gate);
    expect(await b.placer.cancel({ session: s, reason: "from B" })).toBe("requested");
    const err = await turn.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isHostError(err, ErrorCode.Cancelled)).toBe(true);
    const last = (await b.journal.readRange(s)).at(-1)?.event;
    expect(last?.kind).toBe(EventKind.EVENT_ERROR);
    expect(last?.body.case === "error" && last.body.value).toMatchObject({
      code: GrpcStatus.CANCELLED,
      description: "turn cancelled by Cancel: from B",
    });
    // The cancelled turn is resumable from the other host (whose model answers at once).
    const resumed = await b.placer.resume(s, new AbortController().signal);
    expect(resumed.turn?.outputs).toEqual(["echo:held"]);
    await expectSound(b.journal, [s]);
  });

  it("deleteFromAnotherHostIsRefusedWhileATurnRuns; after a cancel it removes the session everywhere", async () => {
    const { a, b, gate } = await twoHosts();
    const s = (await a.createSession({})).uid;
    const { turn } = await heldTurn(a, s, gate);
    const refused = await b.placer.delete(s).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isHostError(refused, ErrorCode.SessionBusy)).toBe(true);
    expect(await b.journal.getSession(s)).toBeDefined();
    expect(await b.placer.cancel({ session: s, reason: "" })).toBe("requested");
    await turn.catch(() => undefined);
    expect((await b.placer.delete(s)).uid).toBe(s);
    for (const host of [a, b]) {
      const gone = await host.getSession(s).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isHostError(gone, ErrorCode.NotFound)).toBe(true);
    }
    const execAfter = await a.placer
      .exec({ session: s, inputs: input("x"), signal: new AbortController().signal })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isHostError(execAfter, ErrorCode.NotFound)).toBe(true);
  });

  it("aCancelFromAnotherHostWhileAForkHoldsAParkedSessionWithdrawsTheWait", async () => {
    const schema = mhSchema();
    cleanups.push(() => dropSchemas([schema]));
    const gated = gatedJournal(await openJournal(journalUrl(schema)), "forkAll");
    const a = await openHost(schema, { journal: gated.journal });
    const b = await openHost(schema);
    const s = (await a.createSession({ harness: "ask" })).uid;
    await a.placer.exec({ session: s, inputs: input("hello"), signal: new AbortController().signal });
    const forking = gated.arm();
    const fork = a.placer.fork({
      parent: s,
      atSeq: 0,
      children: childMetas(3, "ask"),
      signal: new AbortController().signal,
    });
    await forking;
    // The fork ends once B's cancel request has gone out (B found the session held elsewhere).
    const heard = new Promise<void>((resolve) => {
      void gated.journal.onCancelRequest?.((req) => {
        if (req.session === s) resolve();
      });
    });
    const cancel = b.placer.cancel({ session: s, reason: "from B" });
    await heard;
    gated.open();
    expect((await fork).children).toHaveLength(3);
    expect(await cancel).toBe("withdrawn");
    const last = (await b.journal.readRange(s)).at(-1)?.event;
    expect(last?.body.case === "error" && last.body.value.description).toBe("wait withdrawn by Cancel: from B");
    await expectSound(b.journal, [s]);
  });
});
