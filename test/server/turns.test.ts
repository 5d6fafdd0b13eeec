// The turn stream, harnesshost.v1.Turns/Exec (docs/protocol.md §21): each turn is answered as
// Sessions/Exec answers the `final` shape, under its id; a turn's failure is its answer, not the
// stream's end; turns are cancelled by id; at most turnsPerStream are in flight; a duplicate id in
// flight and id 0 are refused; a stopping server ends an idle stream at once; every turn is logged.
import { fromBinary } from "@bufbuild/protobuf";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { ExecUpdateSchema, type ExecUpdate } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Turns, type TurnResponse } from "../../src/gen/harnesshost/v1/turns_pb.js";
import { createClient, type BidiCall, type MethodsOf, type ServiceClient } from "../../src/wire/index.js";
import { unpackFrames } from "../../src/wire/exec-updates.js";
import { eventually } from "../fixtures/eventually.js";
import { drain, gatedEchoModel, startFixture, userInput, type Fixture, type FixtureOptions } from "./helpers.js";

type TurnsClient = ServiceClient<MethodsOf<typeof Turns>>;

/** A turn's log line: an Exec's, with the id it had on its stream. */
const turnLine = (l: string): boolean =>
  l.includes('"msg":"rpc finished"') &&
  l.includes('"method":"/agentsessions.v1.Sessions/Exec"') &&
  l.includes('"turn":"');
type Stream = BidiCall<{ id: bigint; request?: object; cancel?: boolean }, TurnResponse>;

let f: Fixture | undefined;
let stub: TurnsClient | undefined;
afterEach(async () => {
  stub?.close();
  stub = undefined;
  await f?.close();
  f = undefined;
});

/** A stream whose answers are not read until `answers()` is first called. */
async function openLazily(opts: FixtureOptions = {}): Promise<{ f: Fixture; stream: Stream; answers: () => Answers }> {
  f = await startFixture(opts);
  stub = createClient(Turns, f.server.addr);
  const stream = stub.exec() as unknown as Stream;
  let read: Answers | undefined;
  return { f, stream, answers: () => (read ??= new Answers(stream)) };
}

async function open(opts: FixtureOptions = {}): Promise<{ f: Fixture; stream: Stream; answers: Answers }> {
  f = await startFixture(opts);
  stub = createClient(
    Turns,
    f.server.addr,
    opts.tokens ? { metadata: { authorization: `Bearer ${opts.tokens[0]}` } } : {},
  );
  const stream = stub.exec() as unknown as Stream;
  return { f, stream, answers: new Answers(stream) };
}

/** The stream's answers, gathered by turn id; `last(id)` resolves with a turn's last answer. */
class Answers {
  readonly frames = new Map<bigint, Uint8Array[]>();
  readonly #last = new Map<bigint, TurnResponse>();
  readonly #waiting = new Map<bigint, (r: TurnResponse) => void>();
  readonly ended: Promise<{ error?: unknown }>;

  constructor(stream: AsyncIterable<TurnResponse>) {
    this.ended = (async () => {
      try {
        for await (const answer of stream) {
          const list = this.frames.get(answer.id) ?? [];
          if (answer.frames.byteLength > 0) list.push(answer.frames);
          this.frames.set(answer.id, list);
          if (!answer.last) continue;
          this.#last.set(answer.id, answer);
          this.#waiting.get(answer.id)?.(answer);
        }
        return {};
      } catch (error) {
        return { error };
      }
    })();
  }

  last(id: bigint): Promise<TurnResponse> {
    const done = this.#last.get(id);
    if (done !== undefined) return Promise.resolve(done);
    return new Promise((resolve) => this.#waiting.set(id, resolve));
  }

  updates(id: bigint): ExecUpdate[] {
    return (this.frames.get(id) ?? []).flatMap((b) =>
      (unpackFrames(b) ?? [b]).map((x) => fromBinary(ExecUpdateSchema, x)),
    );
  }
}

describe("the turn stream (§21)", () => {
  it("aTurnIsAnsweredAsExecAnswersTheFinalShape: its records, then the session after it", async () => {
    const { f, stream, answers } = await open();
    const uid = (await f.sessions.createSession({ session: { harness: "echo" } })).metadata?.uid ?? "";
    await stream.send({ id: 7n, request: { session: uid, inputs: [userInput("hi")] } });
    const last = await answers.last(7n);
    expect(last.code).toBe(GrpcStatus.OK);
    const updates = answers.updates(7n);
    const replayed = (await drain(f.sessions.replay({ session: uid }))).items;
    expect(updates.slice(0, -1).map((u) => (u.update.case === "record" ? u.update.value : undefined))).toEqual(
      replayed,
    );
    const closing = updates.at(-1)?.update;
    expect(closing?.case).toBe("session");
    expect(closing?.case === "session" ? closing.value : undefined).toEqual(await f.sessions.getSession({ uid }));
    stream.end();
    expect(await answers.ended).toEqual({});
  });

  it("aFailedTurnIsAnsweredWithItsStatusAndTheStreamGoesOn", async () => {
    const { f, stream, answers } = await open();
    await stream.send({ id: 1n, request: { session: "sess-000000000000000000000000", inputs: [userInput("x")] } });
    const failed = await answers.last(1n);
    expect(failed.code).toBe(GrpcStatus.NOT_FOUND);
    expect(failed.message).toMatch(/sess-000000000000000000000000/);
    expect(answers.frames.get(1n) ?? []).toEqual([]);
    await stream.send({ id: 2n, request: { harness: "echo", inputs: [userInput("after")] } });
    expect((await answers.last(2n)).code).toBe(GrpcStatus.OK);
    expect(f.logs.some((l) => turnLine(l) && l.includes('"turn":"1"') && l.includes('"code":"NOT_FOUND"'))).toBe(true);
    stream.end();
    await answers.ended;
  });

  it("aTurnIsCancelledByItsId and is answered CANCELLED", async () => {
    const gate = gatedEchoModel();
    const { f, stream, answers } = await open({ overrides: { model: gate.model } });
    const uid = (await f.sessions.createSession({})).metadata?.uid ?? "";
    await stream.send({ id: 3n, request: { session: uid, inputs: [userInput("long")] } });
    await gate.entered;
    await stream.send({ id: 3n, cancel: true });
    expect((await answers.last(3n)).code).toBe(GrpcStatus.CANCELLED);
    gate.release();
    stream.end();
    await answers.ended;
  });

  it("turnsBeyondTurnsPerStreamAreRefusedResourceExhausted, a duplicate id in flight INVALID_ARGUMENT", async () => {
    const gate = gatedEchoModel();
    const { f, stream, answers } = await open({
      overrides: { model: gate.model },
      config: { limits: { turnsPerStream: 1 } },
    });
    const uid = (await f.sessions.createSession({})).metadata?.uid ?? "";
    await stream.send({ id: 1n, request: { session: uid, inputs: [userInput("first")] } });
    await gate.entered;
    await stream.send({ id: 1n, request: { session: uid, inputs: [userInput("same id")] } });
    await stream.send({ id: 2n, request: { harness: "echo", inputs: [userInput("second")] } });
    const duplicate = await answers.last(1n);
    expect(duplicate.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(duplicate.message).toMatch(/already in flight/);
    const over = await answers.last(2n);
    expect(over.code).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(over.message).toContain("turnsPerStream");
    gate.release();
    stream.end();
    await answers.ended;
    // The first turn ran to its end.
    const recs = (await drain(f.sessions.replay({ session: uid }))).items;
    expect(recs.length).toBeGreaterThan(3);
  });

  it("idZeroEndsTheStreamInvalidArgument", async () => {
    const { stream, answers } = await open();
    await stream.send({ id: 0n, request: { harness: "echo", inputs: [userInput("x")] } });
    const { error } = await answers.ended;
    expect((error as { grpcCode?: number }).grpcCode).toBe(GrpcStatus.INVALID_ARGUMENT);
  });

  it("aStoppingServerEndsAnIdleTurnStream instead of holding its stop for the grace period", async () => {
    const { f, stream, answers } = await open();
    await stream.send({ id: 1n, request: { harness: "echo", inputs: [userInput("x")] } });
    expect((await answers.last(1n)).code).toBe(GrpcStatus.OK);
    // A grace the test's own timeout could not wait out: the stop ends only if the stream is ended.
    await f.server.close(55_000);
    expect(await answers.ended).toEqual({});
  });

  it("aClientThatStopsReadingIsCutOffAtStreamBufferBytes: RESOURCE_EXHAUSTED; the turns it started still commit", async () => {
    const { f, stream, answers } = await openLazily({ config: { limits: { streamBufferBytes: 64 * 1024 } } });
    const turns = 48;
    const uids: string[] = [];
    for (let i = 0; i < turns; i++)
      uids.push((await f.sessions.createSession({ session: { harness: "echo" } })).metadata?.uid ?? "");
    // Answers of ~60 KB each, and nobody reading them: more than the client's buffers, its window and
    // 64 KiB of answers waiting in the host.
    for (let i = 0; i < turns; i++)
      await stream.send({ id: BigInt(i + 1), request: { session: uids[i], inputs: [userInput("x".repeat(20_000))] } });
    await eventually("a turn answered into a full stream", () => f.logs.some(turnLine));
    const read = answers();
    const { error } = await read.ended;
    expect((error as { grpcCode?: number }).grpcCode).toBe(GrpcStatus.RESOURCE_EXHAUSTED);
    expect(String((error as Error).message)).toContain("streamBufferBytes");
    // Every turn the host finished committed, those whose answers were dropped too.
    const ran = f.logs.filter((l) => turnLine(l) && l.includes('"code":"OK"')).length;
    const committed = (
      await Promise.all(uids.map(async (uid) => (await drain(f.sessions.replay({ session: uid }))).items.length))
    ).filter((n) => n > 0).length;
    expect(committed).toBeGreaterThanOrEqual(ran);
    expect(read.frames.size).toBeLessThan(committed);
  });

  it("aStreamWithoutACredentialIsRefusedUnauthenticated when the host has tokens", async () => {
    const token = "turns-test-token-0123456789abcdef";
    f = await startFixture({ tokens: [token] });
    stub = createClient(Turns, f.server.addr);
    const stream = stub.exec() as unknown as Stream;
    const answers = new Answers(stream);
    await stream.send({ id: 1n, request: { harness: "echo", inputs: [userInput("x")] } }).catch(() => undefined);
    const { error } = await answers.ended;
    expect((error as { grpcCode?: number }).grpcCode).toBe(GrpcStatus.UNAUTHENTICATED);
  });
});
