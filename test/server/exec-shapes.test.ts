// Negotiated Exec update shapes (docs/protocol.md §20): a call without the header — every Go client —
// gets the reference stream unchanged and no echo; `all` adds one closing Session frame (the session
// as GetSession serves it after the turn); `records` also drops the delta frames; an unknown value is
// refused before anything is written. harnesshost/client negotiates the shape and reads the session
// after the turn from the closing frame, and asks GetSession only of a host that did not echo it.
// `final` sends only the turn's records and the closing Session frame, packed into one message whose
// frames are byte for byte the `records` shape's; the client asks for it from result() and falls back
// to `records` when an older host refuses `final`.
import { status, type Metadata } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "../../src/client/index.js";
import type { ExecUpdate, Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Sessions as SessionsService } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Server } from "@grpc/grpc-js";
import { addService, createClient, listen, type MethodsOf, type ServiceImpl } from "../../src/wire/index.js";
import { EXEC_UPDATES_HEADER } from "../../src/wire/exec-updates.js";
import { unpackFrames } from "../../src/wire/exec-updates.js";
import { ExecUpdateSchema } from "../../src/gen/agentsessions/v1/session_pb.js";
import { create, toBinary } from "@bufbuild/protobuf";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import { drain, startFixture, userInput, type Fixture } from "./helpers.js";

let f: Fixture;
beforeAll(async () => {
  f = await startFixture();
});
afterAll(async () => {
  await f?.close();
});

const kinds = (items: readonly ExecUpdate[]): string[] => items.map((u) => u.update.case ?? "none");

/** One echo turn on a fresh session with `metadata`; its frames, error and response headers. */
async function echoTurn(metadata: Record<string, string>) {
  const uid = (await f.sessions.createSession({ session: { harness: "echo" } })).metadata?.uid ?? "";
  const headers: Metadata[] = [];
  const { items, error } = await drain(
    f.sessions.exec({ session: uid, inputs: [userInput("hi")] }, { metadata, onHeader: (md) => void headers.push(md) }),
  );
  return { uid, items, error, echoed: headers.flatMap((md) => md.get(EXEC_UPDATES_HEADER)) };
}

/** The RPCs the server logged as finished, by method path. */
const rpcsLogged = (method: string): number =>
  f.logs.filter((l) => l.includes('"rpc finished"') && l.includes(`"method":"${method}"`)).length;

/** What a relay serves for one method of Sessions, given the upstream client it forwards to. */
type RelayMethod = (upstream: Record<string, (r: never, o?: unknown) => unknown>, name: string) => unknown;

/**
 * A Sessions server on loopback that forwards every call to the fixture without its metadata (as a
 * host that ignores the header would), except where `method` answers otherwise; `run` gets a
 * harnesshost/client of it and a fresh echo session on it. Everything it opened is closed after.
 */
async function throughRelay(
  method: RelayMethod | undefined,
  run: (client: ReturnType<typeof connect>, uid: string) => Promise<void>,
): Promise<void> {
  const upstream = createClient(SessionsService, f.server.addr);
  const calls = upstream as unknown as Record<string, (r: never, o?: unknown) => unknown>;
  const relayed = new Proxy({} as ServiceImpl<MethodsOf<typeof Sessions>>, {
    get: (_t, name: string) => method?.(calls, name) ?? ((req: never) => calls[name]?.(req)),
  });
  const relay = new Server();
  addService(relay, SessionsService, relayed);
  const client = connect({ address: await listen(relay, "127.0.0.1:0") });
  try {
    await run(client, (await client.sessions.create({ harness: "echo" })).metadata?.uid ?? "");
  } finally {
    client.close();
    upstream.close();
    relay.forceShutdown();
  }
}

describe("Exec update shapes", () => {
  it("aCallWithoutTheHeaderGetsTheReferenceStreamAndNoEcho", async () => {
    const { items, error, echoed } = await echoTurn({});
    expect(error).toBeUndefined();
    // The echo turn as the reference streams it: the Session frame, the first commit's three records,
    // the model's one delta, then OUTPUT and END.
    expect(kinds(items)).toEqual(["session", "record", "record", "record", "delta", "record", "record"]);
    expect(echoed).toEqual([]);
  });

  it("theAllShapeAddsOneClosingSessionFrameEqualToGetSession", async () => {
    const { uid, items, error, echoed } = await echoTurn({ [EXEC_UPDATES_HEADER]: "all" });
    expect(error).toBeUndefined();
    expect(echoed).toEqual(["all"]);
    expect(kinds(items)).toEqual(["session", "record", "record", "record", "delta", "record", "record", "session"]);
    const closing = items.at(-1)?.update;
    const served = await f.sessions.getSession({ uid });
    expect(closing?.case === "session" ? closing.value : undefined).toEqual(served);
    expect(served.lastSeq).toBe(5n);
  });

  it("theRecordsShapeDropsDeltasAndClosesWithTheSession", async () => {
    const { uid, items, error, echoed } = await echoTurn({ [EXEC_UPDATES_HEADER]: "records" });
    expect(error).toBeUndefined();
    expect(echoed).toEqual(["records"]);
    expect(kinds(items)).toEqual(["session", "record", "record", "record", "record", "record", "session"]);
    const closing = items.at(-1)?.update;
    expect(closing?.case === "session" ? closing.value : undefined).toEqual(await f.sessions.getSession({ uid }));
  });

  it("anUnknownShapeIsRefusedAsInvalidArgumentBeforeAnythingIsWritten", async () => {
    const before = await f.host.journal.allSessionUids();
    const { items, error } = await drain(
      f.sessions.exec(
        { harness: "echo", inputs: [userInput("hi")] },
        { metadata: { [EXEC_UPDATES_HEADER]: "everything" } },
      ),
    );
    expect(items).toEqual([]);
    expect(error?.grpcCode).toBe(status.INVALID_ARGUMENT);
    expect(error?.message).toContain(
      `${EXEC_UPDATES_HEADER} "everything" is not a known shape; expected one of: all, records, final`,
    );
    expect(await f.host.journal.allSessionUids()).toEqual(before);
  });

  it("theShapeEchoGoesWithTheStatusOfAnExecRefusedBeforeItsFirstFrame", async () => {
    // The echo is deferred to the first frame; a call refused before one still carries it, with its status.
    const headers: Metadata[] = [];
    const { items, error } = await drain(
      f.sessions.exec(
        { session: "sess-nosuchsession", inputs: [userInput("hi")] },
        { metadata: { [EXEC_UPDATES_HEADER]: "records" }, onHeader: (md) => void headers.push(md) },
      ),
    );
    expect(items).toEqual([]);
    expect(error?.grpcCode).toBe(status.NOT_FOUND);
    expect(headers.flatMap((md) => md.get(EXEC_UPDATES_HEADER))).toEqual(["records"]);
  });

  it("theClientReadsTheSessionAfterTheTurnFromTheClosingFrameWithoutGetSession", async () => {
    const client = connect({ address: f.server.addr });
    try {
      const uid = (await client.sessions.create({ harness: "echo" })).metadata?.uid ?? "";
      const gets = rpcsLogged("/agentsessions.v1.Sessions/GetSession");
      const result = await client.sessions.exec({ session: uid, input: "hi" }).result();
      expect(result.outputs).toEqual(["echo:hi"]);
      expect(result.session.lastSeq).toBe(5n);
      expect(result.session.turn?.status).toBe("completed");
      const events = [];
      for await (const e of client.sessions.exec({ session: uid, input: "again" })) events.push(e.kind);
      expect(events).toEqual(["session", "record", "record", "record", "delta", "record", "record", "session"]);
      expect(rpcsLogged("/agentsessions.v1.Sessions/GetSession")).toBe(gets);
    } finally {
      client.close();
    }
  });

  it("theClientOfAHostThatIgnoresTheHeaderAsksGetSessionAfterTheTurn", async () => {
    // A relay in front of the fixture forwards no metadata — as a host that ignores the header would.
    await throughRelay(undefined, async (client, uid) => {
      const gets = rpcsLogged("/agentsessions.v1.Sessions/GetSession");
      const result = await client.sessions.exec({ session: uid, input: "hi" }).result();
      expect(result.outputs).toEqual(["echo:hi"]);
      expect(result.session.lastSeq).toBe(5n);
      expect(rpcsLogged("/agentsessions.v1.Sessions/GetSession")).toBe(gets + 1);
    });
  });

  it("theFinalShapeSendsTheTurnsRecordsAndTheClosingSessionPackedInOneMessage", async () => {
    const uid = (await f.sessions.createSession({ session: { harness: "echo" } })).metadata?.uid ?? "";
    const headers: Metadata[] = [];
    const sizes: number[] = [];
    const { items, error } = await drain(
      f.sessions.exec(
        { session: uid, inputs: [userInput("hi")] },
        {
          metadata: { [EXEC_UPDATES_HEADER]: "final" },
          onHeader: (md) => void headers.push(md),
          onResponseBytes: (n) => void sizes.push(n),
          unpackResponse: (bytes) => unpackFrames(bytes),
        },
      ),
    );
    expect(error).toBeUndefined();
    expect(headers.flatMap((md) => md.get(EXEC_UPDATES_HEADER))).toEqual(["final"]);
    expect(sizes).toHaveLength(1);
    expect(kinds(items)).toEqual(["record", "record", "record", "record", "record", "session"]);
    // Each frame is what the records shape sends for the same record: the journal's record, as Replay
    // serves it, in an ExecUpdate of its own.
    const replayed = (await drain(f.sessions.replay({ session: uid }))).items;
    expect(replayed.map((r) => r.seq)).toEqual([1n, 2n, 3n, 4n, 5n]);
    const frames = items.map((u) => toBinary(ExecUpdateSchema, u));
    const expected = replayed.map((r) =>
      toBinary(ExecUpdateSchema, create(ExecUpdateSchema, { update: { case: "record", value: r } })),
    );
    expect(frames.slice(0, 5)).toEqual(expected);
    expect(sizes[0]).toBe(frames.reduce((n, b) => n + b.byteLength, 0));
    const closing = items.at(-1)?.update;
    expect(closing?.case === "session" ? closing.value : undefined).toEqual(await f.sessions.getSession({ uid }));
  });

  it("aPlainDecoderReadsAPackedFinalMessageAsItsClosingSessionFrame", async () => {
    const uid = (await f.sessions.createSession({ session: { harness: "echo" } })).metadata?.uid ?? "";
    const { items, error } = await drain(
      f.sessions.exec({ session: uid, inputs: [userInput("hi")] }, { metadata: { [EXEC_UPDATES_HEADER]: "final" } }),
    );
    expect(error).toBeUndefined();
    expect(kinds(items)).toEqual(["session"]);
    const only = items[0]?.update;
    expect(only?.case === "session" ? only.value : undefined).toEqual(await f.sessions.getSession({ uid }));
  });

  it("aFinalExecThatFailsSendsNoFrameAndItsStatus", async () => {
    const missing = await drain(
      f.sessions.exec(
        { session: "sess-nosuchsession", inputs: [userInput("hi")] },
        { metadata: { [EXEC_UPDATES_HEADER]: "final" }, unpackResponse: (bytes) => unpackFrames(bytes) },
      ),
    );
    expect(missing.items).toEqual([]);
    expect(missing.error?.grpcCode).toBe(status.NOT_FOUND);
    const uid = (await f.sessions.createSession({ session: { harness: "echo" } })).metadata?.uid ?? "";
    const stale = await drain(
      f.sessions.exec(
        { session: uid, inputs: [userInput("hi")], expectedLastSeq: 7n },
        { metadata: { [EXEC_UPDATES_HEADER]: "final" }, unpackResponse: (bytes) => unpackFrames(bytes) },
      ),
    );
    expect(stale.items).toEqual([]);
    expect(stale.error?.grpcCode).toBe(status.ABORTED);
    expect((await f.sessions.getSession({ uid })).lastSeq).toBe(0n);
    const otherHarness = await drain(
      f.sessions.exec(
        { session: uid, harness: "no-such-harness", inputs: [userInput("hi")] },
        { metadata: { [EXEC_UPDATES_HEADER]: "final" } },
      ),
    );
    expect(otherHarness.error?.grpcCode).toBe(status.FAILED_PRECONDITION);
  });

  it("theClientsResultGetsTheSameRecordsAndSessionFromTheFinalShape", async () => {
    const client = connect({ address: f.server.addr });
    try {
      const uid = (await client.sessions.create({ harness: "echo" })).metadata?.uid ?? "";
      const gets = rpcsLogged("/agentsessions.v1.Sessions/GetSession");
      const result = await client.sessions.exec({ session: uid, input: "hi" }).result();
      expect(result.outputs).toEqual(["echo:hi"]);
      expect(result.lastSeq).toBe(5n);
      expect(result.records).toEqual((await drain(f.sessions.replay({ session: uid }))).items);
      expect(rpcsLogged("/agentsessions.v1.Sessions/GetSession")).toBe(gets);
      expect(result.session).toEqual(await client.sessions.get(uid));
      // A new session: its uid comes from the closing frame.
      const fresh = await client.sessions.exec({ harness: "echo", input: "new" }).result();
      expect(fresh.outputs).toEqual(["echo:new"]);
      expect(fresh.session.metadata?.uid).toMatch(/^sess-/);
      expect(fresh.session.lastSeq).toBe(5n);
    } finally {
      client.close();
    }
  });

  it("theFinalShapesResultSettlesAtItsClosingFrameWithoutWaitingForTheStatus", async () => {
    // A host that sends the turn's frames and the closing Session frame, then holds the stream open:
    // result() has the whole outcome at the closing frame (§20 rule 8) and must not wait for the status.
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let ended = false;
    const holdsTheStatus: RelayMethod = (upstream, name) =>
      name === "exec"
        ? async function* (req: never, ctx: { metadata: Metadata; deferHeader(md: Metadata): void }) {
            ctx.deferHeader(ctx.metadata.clone());
            const frames = upstream["exec"]?.(req, {
              metadata: { [EXEC_UPDATES_HEADER]: "final" },
              unpackResponse: unpackFrames,
            }) as AsyncIterable<ExecUpdate>;
            for await (const frame of frames) yield frame;
            await held;
            ended = true;
          }
        : undefined;
    await throughRelay(holdsTheStatus, async (client, uid) => {
      const call = client.sessions.exec({ session: uid, input: "hi" });
      try {
        const result = await call.result();
        expect(ended).toBe(false);
        expect(result.outputs).toEqual(["echo:hi"]);
        expect(result.records.map((r) => r.seq)).toEqual([1n, 2n, 3n, 4n, 5n]);
        expect(result.session.lastSeq).toBe(5n);
      } finally {
        release();
      }
    });
  });

  it("framesAfterAFinalStreamsClosingFrameChangeNothing: the result stays as it was given", async () => {
    // A host that breaks §20 rule 8: after the closing Session frame it sends one more record frame.
    let ended: () => void = () => undefined;
    const streamEnded = new Promise<void>((resolve) => {
      ended = resolve;
    });
    const extraFrame: RelayMethod = (upstream, name) =>
      name === "exec"
        ? async function* (req: never, ctx: { metadata: Metadata; deferHeader(md: Metadata): void }) {
            ctx.deferHeader(ctx.metadata.clone());
            const frames: ExecUpdate[] = [];
            const sent = upstream["exec"]?.(req, {
              metadata: { [EXEC_UPDATES_HEADER]: "final" },
              unpackResponse: unpackFrames,
            }) as AsyncIterable<ExecUpdate>;
            for await (const frame of sent) {
              frames.push(frame);
              yield frame;
            }
            yield frames[0] as ExecUpdate;
            ended();
          }
        : undefined;
    await throughRelay(extraFrame, async (client, uid) => {
      const result = await client.sessions.exec({ session: uid, input: "hi" }).result();
      await streamEnded;
      await client.sessions.get(uid); // the extra frame has reached the client by the time this answers
      expect(result.records.map((r) => r.seq)).toEqual([1n, 2n, 3n, 4n, 5n]);
      expect(result.outputs).toEqual(["echo:hi"]);
    });
  });

  it("theClientOfAHostThatRefusesFinalAsUnknownRetriesWithRecords", async () => {
    // An older harnesshost: knows `all` and `records`, refuses anything else before running anything.
    const asked: string[] = [];
    const olderHost: RelayMethod = (upstream, name) =>
      name === "exec"
        ? (req: never, ctx: { metadata: Metadata; deferHeader(md: Metadata): void }) => {
            const value = String(ctx.metadata.get(EXEC_UPDATES_HEADER)[0] ?? "");
            asked.push(value);
            if (value !== "records" && value !== "all")
              throw new HostError(
                ErrorCode.InvalidArgument,
                `${EXEC_UPDATES_HEADER} ${JSON.stringify(value)} is not a known shape; expected one of: all, records`,
              );
            ctx.deferHeader(ctx.metadata.clone());
            return upstream["exec"]?.(req, { metadata: { [EXEC_UPDATES_HEADER]: value } });
          }
        : undefined;
    await throughRelay(olderHost, async (client, uid) => {
      const gets = rpcsLogged("/agentsessions.v1.Sessions/GetSession");
      const result = await client.sessions.exec({ session: uid, input: "hi" }).result();
      expect(asked).toEqual(["final", "records"]);
      expect(result.outputs).toEqual(["echo:hi"]);
      expect(result.session.lastSeq).toBe(5n);
      expect(result.records.map((r) => r.seq)).toEqual([1n, 2n, 3n, 4n, 5n]);
      expect(rpcsLogged("/agentsessions.v1.Sessions/GetSession")).toBe(gets);
    });
  });
});
