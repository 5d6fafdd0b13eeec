// harnesshost/client and the turn stream (docs/protocol.md §21, docs/client.md): `result()` of a call
// awaited alone goes over the client's one turn stream when the host serves it — no Sessions/Exec
// call — and a call with a deadline goes through Sessions/Exec; an aborted turn is cancelled over the
// stream. (A host without the stream is asked with Exec: test/server/exec-shapes.test.ts's relays.)
import { afterEach, describe, expect, it } from "vitest";
import { connect, type HarnessHostClient } from "../../src/client/index.js";
import { eventually } from "../fixtures/eventually.js";
import { gatedEchoModel, startFixture, type Fixture, type FixtureOptions } from "./helpers.js";

let f: Fixture | undefined;
let client: HarnessHostClient | undefined;
afterEach(async () => {
  client?.close();
  client = undefined;
  await f?.close();
  f = undefined;
});

async function start(opts: FixtureOptions = {}): Promise<{ f: Fixture; client: HarnessHostClient }> {
  f = await startFixture(opts);
  client = connect({ address: f.server.addr });
  return { f, client };
}

/** Exec log lines: a turn's over the turn stream carries its `turn` id, an Exec call's does not. */
const execLines = (f: Fixture, overStream: boolean): string[] =>
  f.logs.filter(
    (l) =>
      l.includes('"msg":"rpc finished"') &&
      l.includes('"method":"/agentsessions.v1.Sessions/Exec"') &&
      l.includes('"turn":"') === overStream,
  );

describe("harnesshost/client over the turn stream", () => {
  it("resultGoesOverTheTurnStreamWhenTheHostServesIt: one turn line per turn, no Exec call", async () => {
    const { f, client } = await start();
    const first = await client.sessions.exec({ harness: "echo", input: "one" }).result();
    const uid = first.session.metadata?.uid ?? "";
    const second = await client.sessions.exec({ session: uid, input: "two" }).result();
    expect(first.outputs).toEqual(["echo:one"]);
    expect(second.outputs).toEqual(["echo:two"]);
    expect(second.records.map((r) => r.seq)).toEqual([6n, 7n, 8n, 9n, 10n]);
    expect(second.session).toEqual(await client.sessions.get(uid));
    expect(execLines(f, true)).toHaveLength(2);
    expect(execLines(f, false)).toHaveLength(0);
  });

  it("aCallWithADeadlineGoesThroughExec: a deadline is a call's", async () => {
    const { f, client } = await start();
    const r = await client.sessions.exec({ harness: "echo", input: "timed" }, { timeoutMs: 30_000 }).result();
    expect(r.outputs).toEqual(["echo:timed"]);
    expect(execLines(f, false)).toHaveLength(1);
    expect(execLines(f, true)).toHaveLength(0);
  });

  it("anAbortedTurnIsCancelledOverTheStream: result() rejects CANCELLED and the host's turn ends CANCELLED", async () => {
    const gate = gatedEchoModel();
    const { f, client } = await start({ overrides: { model: gate.model } });
    const uid = (await client.sessions.create({})).metadata?.uid ?? "";
    const abort = new AbortController();
    const pending = client.sessions.exec({ session: uid, input: "long" }, { signal: abort.signal }).result();
    await gate.entered;
    abort.abort();
    await expect(pending).rejects.toMatchObject({ code: "cancelled" });
    // The host answered the cancel (the model call still waits on its gate): the turn's line says CANCELLED.
    await eventually("the cancelled turn's line", () =>
      execLines(f, true).some((l) => l.includes('"code":"CANCELLED"')),
    );
    gate.release();
    // The stream goes on: the next turn on the same client is answered.
    expect((await client.sessions.exec({ harness: "echo", input: "next" }).result()).outputs).toEqual(["echo:next"]);
  });
});
