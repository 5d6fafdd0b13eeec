// Misbehaving peers. A hand-written node (through the wire adapter) that breaks the protocol must make
// RemoteHarness fail cleanly with the right error and never hang; a hand-written host that breaks it
// must make the node end the turn FAILED (or refuse the stream) without an END it did not earn.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Server, status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Harness as HarnessService } from "../../src/gen/agentsessions/v1/harness_pb.js";
import type { ControllerFrame } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { RemoteHarness, serveHarness } from "../../src/node/index.js";
import type { HarnessNode } from "../../src/node/index.js";
import { RpcError, addService, createClient, listen } from "../../src/wire/index.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { CallContext } from "../../src/wire/index.js";
import { RecordingSink, ScriptedHarness, failureOf, startInfo, textMessage } from "./fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "hh-fake-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type EventInit = MessageInitShape<typeof EventSchema>;

function abortedWith(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

describe("a misbehaving node", () => {
  let server: Server;
  let address: string;
  const remotes: RemoteHarness[] = [];
  let neverAnswersCancelled: Promise<void> | undefined;

  /** The fake node's turn, chosen by the envelope's session. */
  async function* fakeTurn(frames: AsyncIterable<ControllerFrame>, ctx: CallContext): AsyncIterable<EventInit> {
    const it = frames[Symbol.asyncIterator]();
    const first = await it.next();
    if (first.done === true) return;
    const { session, executionId } = first.value;
    const output = (text: string): EventInit => ({
      executionId,
      kind: EventKind.EVENT_OUTPUT,
      body: { case: "message", value: textMessage(text, "assistant") },
    });
    switch (session) {
      case "wrong-execution":
        yield { ...output("x"), executionId: "ffffffffffffffff" };
        return;
      case "host-only":
        yield output("before");
        yield { executionId, kind: EventKind.EVENT_LIFECYCLE, body: { case: "lifecycle", value: {} } };
        return;
      case "no-end":
        yield output("partial");
        return;
      case "never-answers":
        neverAnswersCancelled = abortedWith(ctx.signal);
        await neverAnswersCancelled;
        return;
      case "crash":
        yield output("partial");
        throw new Error("node exploded");
      case "error-event":
        yield {
          executionId,
          kind: EventKind.EVENT_ERROR,
          body: { case: "error", value: { code: 9, description: "bad args" } },
        };
        return;
      case "canceled-end":
        yield {
          executionId,
          kind: EventKind.EVENT_END,
          body: { case: "end", value: { state: "CANCELED", error: { description: "stopped" } } },
        };
        return;
      case "model-then-end": {
        yield {
          executionId,
          kind: EventKind.EVENT_MODEL_CALL,
          body: { case: "model", value: { id: "m-1", model: "m", messages: [textMessage("hi")] } },
        };
        const reply = await it.next();
        const ok =
          reply.done !== true && reply.value.frame.case === "model" && reply.value.frame.value.modelCallId === "m-1";
        yield output(
          ok
            ? `reply ok: usage ${reply.value.frame.case === "model" ? String(reply.value.frame.value.usage?.inputTokens) : ""}`
            : "reply bad",
        );
        yield { executionId, kind: EventKind.EVENT_END, body: { case: "end", value: { state: "COMPLETED" } } };
        return;
      }
      default:
        return;
    }
  }

  beforeAll(async () => {
    server = new Server();
    addService(server, HarnessService, {
      describe: () => ({ id: "fake" }),
      connect: fakeTurn,
    });
    address = await listen(server, `unix://${join(dir, "fake.sock")}`);
  });
  afterAll(() => {
    for (const r of remotes) r.close();
    server.forceShutdown();
  });

  function run(session: string, sink = new RecordingSink(), signal = new AbortController().signal): Promise<unknown> {
    const r = new RemoteHarness({ address, session });
    remotes.push(r);
    return failureOf(r.run(startInfo("0123456789abcdef", "x"), sink, signal));
  }

  it("a foreign execution_id fails the turn", async () => {
    const err = await run("wrong-execution");
    expect(isHostError(err, ErrorCode.Internal)).toBe(true);
    expect((err as Error).message).toMatch(/execution_id mismatch/);
  });

  it("a host-only event kind fails the turn, after the events before it", async () => {
    const sink = new RecordingSink();
    const err = await run("host-only", sink);
    expect(isHostError(err, ErrorCode.Internal)).toBe(true);
    expect((err as Error).message).toBe("harness emitted host-only event kind EVENT_LIFECYCLE");
    expect(sink.outputs()).toEqual(["before"]);
  });

  it("a stream closed without END is a failure, not a success", async () => {
    const sink = new RecordingSink();
    const err = await run("no-end", sink);
    expect(isHostError(err, ErrorCode.Internal)).toBe(true);
    expect((err as Error).message).toBe("harness stream closed without END");
    expect(sink.outputs()).toEqual(["partial"]);
  });

  it("a node that fails the stream mid-turn is 'harness lost mid-turn'", async () => {
    const err = await run("crash");
    expect(isHostError(err, ErrorCode.Internal)).toBe(true);
    expect((err as Error).message).toMatch(/^harness lost mid-turn: node exploded/);
  });

  it("EVENT_ERROR and END CANCELED fail the turn with their descriptions", async () => {
    const e1 = await run("error-event");
    expect(isHostError(e1, ErrorCode.FailedPrecondition)).toBe(true);
    expect((e1 as Error).message).toMatch(/bad args/);
    const e2 = await run("canceled-end");
    expect(e2).toMatchObject({ state: "CANCELED", message: "stopped", code: ErrorCode.Cancelled });
  });

  it("model replies echo the node's call id and carry usage", async () => {
    const sink = new RecordingSink();
    const r = new RemoteHarness({ address, session: "model-then-end" });
    remotes.push(r);
    await r.run(startInfo("0123456789abcdef", "x"), sink, new AbortController().signal);
    expect(sink.outputs()).toEqual(["reply ok: usage 7"]);
  });

  it("a node that never answers is cut off by the caller's deadline, and sees the cancel", async () => {
    const err = await run("never-answers", new RecordingSink(), AbortSignal.timeout(200));
    expect(isHostError(err, ErrorCode.Cancelled)).toBe(true);
    await neverAnswersCancelled;
  });
});

describe("a misbehaving host against serveHarness", () => {
  let node: HarnessNode;
  let harness: ReturnType<typeof harnessClient>;
  function harnessClient(address: string) {
    return createClient(HarnessService, address);
  }

  beforeAll(async () => {
    node = await serveHarness(() => new ScriptedHarness(), { listen: `unix://${join(dir, "real.sock")}` });
    harness = harnessClient(node.address);
  });
  afterAll(async () => {
    harness.close();
    await node.close();
  });

  async function collect(call: AsyncIterable<Event>): Promise<Event[]> {
    const out: Event[] = [];
    for await (const e of call) out.push(e);
    return out;
  }

  it("a first frame that is not Start fails with INVALID_ARGUMENT and no END", async () => {
    const call = harness.connect();
    await call.send({ executionId: "0123456789abcdef", frame: { case: "cancel", value: { reason: "USER" } } });
    call.end();
    const seen: Event[] = [];
    const err = await failureOf(
      (async () => {
        for await (const e of call) seen.push(e);
      })(),
    );
    expect(err).toBeInstanceOf(RpcError);
    expect((err as RpcError).grpcCode).toBe(GrpcStatus.INVALID_ARGUMENT);
    expect(seen).toEqual([]);
  });

  it("a Start without execution_id fails with INVALID_ARGUMENT", async () => {
    const call = harness.connect();
    await call.send({ session: "h1", frame: { case: "start", value: { inputs: [textMessage("count")] } } });
    call.end();
    const err = await failureOf(collect(call));
    expect((err as RpcError).grpcCode).toBe(GrpcStatus.INVALID_ARGUMENT);
  });

  it("a wrong model_call_id is a sticky sink failure: END FAILED 'model result correlation mismatch'", async () => {
    const call = harness.connect();
    const exec = "0123456789abcdef";
    await call.send({
      session: "h2",
      executionId: exec,
      frame: { case: "start", value: { inputs: [textMessage("model")] } },
    });
    const it = call[Symbol.asyncIterator]();
    const mc = await it.next();
    expect(mc.done !== true && mc.value.kind).toBe(EventKind.EVENT_MODEL_CALL);
    const id = mc.done !== true && mc.value.body.case === "model" ? mc.value.body.value.id : "";
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    await call.send({
      executionId: exec,
      frame: { case: "model", value: { modelCallId: `not-${id}`, message: textMessage("x", "assistant") } },
    });
    const end = await it.next();
    expect(end.done !== true && end.value.kind).toBe(EventKind.EVENT_END);
    const body = end.done !== true && end.value.body.case === "end" ? end.value.body.value : undefined;
    expect(body?.state).toBe("FAILED");
    expect(body?.error?.description).toBe("model result correlation mismatch");
    expect(body?.error?.code).toBe(GrpcStatus.INTERNAL);
    call.end();
    expect((await it.next()).done).toBe(true);
  });

  it("a reply with a foreign execution_id fails the turn", async () => {
    const call = harness.connect();
    const exec = "0123456789abcdef";
    await call.send({
      session: "h3",
      executionId: exec,
      frame: { case: "start", value: { inputs: [textMessage("model")] } },
    });
    const it = call[Symbol.asyncIterator]();
    const mc = await it.next();
    const id = mc.done !== true && mc.value.body.case === "model" ? mc.value.body.value.id : "";
    await call.send({ executionId: "ffffffffffffffff", frame: { case: "model", value: { modelCallId: id } } });
    const end = await it.next();
    const body = end.done !== true && end.value.body.case === "end" ? end.value.body.value : undefined;
    expect(body).toMatchObject({ state: "FAILED", error: { description: "result execution_id mismatch" } });
    call.cancel();
  });

  it("a Cancel frame mid-turn aborts the harness and ends the turn CANCELED", async () => {
    const call = harness.connect();
    const exec = "00000000000000ce";
    await call.send({
      session: "h4",
      executionId: exec,
      frame: { case: "start", value: { inputs: [textMessage("wait")] } },
    });
    const it = call[Symbol.asyncIterator]();
    const waiting = await it.next();
    expect(waiting.done !== true && waiting.value.kind).toBe(EventKind.EVENT_OUTPUT);
    await call.send({ executionId: exec, frame: { case: "cancel", value: { reason: "USER" } } });
    const end = await it.next();
    const body = end.done !== true && end.value.body.case === "end" ? end.value.body.value : undefined;
    expect(body).toMatchObject({ state: "CANCELED", error: { code: GrpcStatus.CANCELLED } });
    call.cancel();
  });
});
