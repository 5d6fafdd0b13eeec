// Harness.Connect on a node: one turn of a session's actor per stream. Invariant: the first frame is a
// Start with an execution_id (else INVALID_ARGUMENT and no END); once a turn starts, the stream ends with
// exactly one END (COMPLETED, FAILED or CANCELED with a gRPC code) unless the host went away first — or,
// when the host parked the turn on an approval gate, exactly one EVENT_PARKED naming the gate and no END.
// A Start carrying only a history tail runs with the full history the node's cache rebuilds, or is
// refused (FAILED_PRECONDITION, stale history) before the harness runs (docs/protocol.md §8.8).
import { followAbort } from "../abort.js";
import { REQUEST_ID_HEADER, VALID_REQUEST_ID } from "../wire/request-id.js";
import { create } from "@bufbuild/protobuf";
import { Metadata, status as GrpcStatus } from "@grpc/grpc-js";
import { EventKind, EventSchema } from "../gen/agentsessions/v1/common_pb.js";
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import type { ControllerFrame, Harness as HarnessService } from "../gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, HostError, grpcStatusOf, isHostError } from "../errors/index.js";
import type { StartInfo } from "../harness/types.js";
import { AsyncQueue } from "../wire/index.js";
import type { CallContext, MethodsOf, ServerHandler } from "../wire/index.js";
import type { ActorTable } from "./actor-table.js";
import { HISTORY_HELD_HEADER, historyRequestOf, staleHistory } from "./history-headers.js";
import type { HistoryStore } from "./history-store.js";
import { DEFAULT_LIMITS } from "../limits/index.js";
import { scopeFields } from "../obs/op-log.js";
import type { NodeLogger } from "./logger.js";
import { StreamSink } from "./stream-sink.js";

type ConnectMethod = MethodsOf<typeof HarnessService>["connect"];

export function connectHandler(
  table: ActorTable,
  histories: HistoryStore | undefined,
  logger?: NodeLogger,
): ServerHandler<ConnectMethod> {
  return (frames, ctx) => {
    const events = new AsyncQueue<Event>();
    runTurn(table, histories, frames[Symbol.asyncIterator](), ctx, events, logger).then(
      () => events.end(),
      (err: unknown) => events.fail(err),
    );
    return events;
  };
}

async function runTurn(
  table: ActorTable,
  histories: HistoryStore | undefined,
  frames: AsyncIterator<ControllerFrame>,
  ctx: CallContext,
  events: AsyncQueue<Event>,
  logger: NodeLogger | undefined,
): Promise<void> {
  const first = await frames.next();
  const envelope = first.done === true ? undefined : first.value;
  const sent = withRequestId(startInfoOf(envelope), ctx);
  // From the busy check to the claim nothing awaits: no other turn of the session can start in between,
  // so the cached history array the harness receives is not extended while it runs.
  table.assertNotBusy(sent.sessionUid);
  const start = withFullHistory(sent, histories, ctx);
  const claim = table.beginTurn(start.sessionUid);
  const turn = new AbortController();
  const unlink = [ctx.signal, claim.signal].map((s) => followAbort(s, turn));
  const replies = new AsyncQueue<ControllerFrame>();
  void pumpReplies(frames, replies, turn);
  const sink = new StreamSink(start.executionId, events, replies, turn.signal, start.sessionUid);
  let failure: unknown;
  try {
    await claim.harness.run(start, sink, turn.signal);
  } catch (err) {
    failure = err;
  } finally {
    sink.close();
    claim.finish();
    for (const u of unlink) u();
  }
  failure ??= sink.failure;
  if (failure !== undefined && sink.parked === undefined) {
    // The host's field names (docs/operations.md, "Log fields"): one grep finds both sides of a turn.
    logger?.warn(
      {
        ...scopeFields(
          { requestId: start.requestId, session: start.sessionUid, executionId: start.executionId },
          DEFAULT_LIMITS.logFieldChars,
        ),
        err: describe(failure),
      },
      "turn failed",
    );
  }
  if (ctx.signal.aborted) return;
  const parked = sink.parked;
  if (parked !== undefined) {
    const ref = parked.ref;
    await events.send(
      create(EventSchema, {
        executionId: start.executionId,
        kind: EventKind.EVENT_PARKED,
        body: {
          case: "parked",
          value: { executionId: ref.executionId, toolCallId: ref.toolCallId, requestSeq: BigInt(ref.requestSeq) },
        },
      }),
    );
    return;
  }
  await events.send(endEvent(start.executionId, failure, turn.signal.aborted));
}

/** The Start with the x-request-id the host forwarded (when it sent a well-formed one). */
function withRequestId(start: StartInfo, ctx: CallContext): StartInfo {
  const [id] = ctx.metadata.get(REQUEST_ID_HEADER);
  return typeof id === "string" && VALID_REQUEST_ID.test(id) ? { ...start, requestId: id } : start;
}

/** The Start with its full history (a tail extended from the cache); answers the held count in a header. */
function withFullHistory(sent: StartInfo, histories: HistoryStore | undefined, ctx: CallContext): StartInfo {
  const request = historyRequestOf(ctx.metadata);
  if (request.kind === "none") return sent;
  if (histories === undefined) {
    if (request.kind === "tail") throw staleHistory(ctx.trailers, "this node keeps no history between turns");
    return sent;
  }
  const { history, held } = histories.resolve(sent.sessionUid, sent.history, request, ctx.trailers);
  if (held > 0) ctx.sendHeader(heldHeader(held));
  return { ...sent, history };
}

function heldHeader(held: number): Metadata {
  const md = new Metadata();
  md.set(HISTORY_HELD_HEADER, String(held));
  return md;
}

function startInfoOf(envelope: ControllerFrame | undefined): StartInfo {
  if (envelope === undefined || envelope.frame.case !== "start") {
    throw new HostError(ErrorCode.InvalidArgument, "first ControllerFrame must be Start");
  }
  if (envelope.executionId === "") {
    throw new HostError(ErrorCode.InvalidArgument, "Start requires an execution_id");
  }
  const start = envelope.frame.value;
  const resumeFromSeq = Number(start.resumeFromSeq);
  if (!Number.isSafeInteger(resumeFromSeq) || resumeFromSeq < 0) {
    throw new HostError(ErrorCode.InvalidArgument, `resume_from_seq out of range: ${start.resumeFromSeq}`);
  }
  const identity = start.identity;
  return {
    sessionUid: envelope.session,
    executionId: envelope.executionId,
    config: start.config,
    history: start.history,
    inputs: start.inputs,
    resumeFromSeq,
    ...(identity !== undefined
      ? {
          identity: {
            ...(identity.principal !== undefined ? { principal: identity.principal } : {}),
            canMintTokens: identity.canMintTokens,
          },
        }
      : {}),
  };
}

/** Moves reply frames to the sink; a Cancel frame cancels the turn instead. */
async function pumpReplies(
  frames: AsyncIterator<ControllerFrame>,
  replies: AsyncQueue<ControllerFrame>,
  turn: AbortController,
): Promise<void> {
  try {
    for (;;) {
      const next = await frames.next();
      if (next.done === true) {
        replies.end();
        return;
      }
      const frame = next.value;
      if (frame.frame.case === "cancel") {
        turn.abort(
          new HostError(
            ErrorCode.Cancelled,
            `controller cancelled the turn (${frame.frame.value.reason || "no reason"})`,
          ),
        );
        continue;
      }
      replies.offer(frame);
    }
  } catch (err) {
    replies.fail(err);
  }
}

function endEvent(executionId: string, failure: unknown, turnAborted: boolean): Event {
  if (failure === undefined) {
    return create(EventSchema, {
      executionId,
      kind: EventKind.EVENT_END,
      body: { case: "end", value: { state: "COMPLETED" } },
    });
  }
  const cancelled = turnAborted && isHostError(failure, ErrorCode.Cancelled);
  const code = failure instanceof HostError ? grpcStatusOf(failure.code) : GrpcStatus.INTERNAL;
  return create(EventSchema, {
    executionId,
    kind: EventKind.EVENT_END,
    body: {
      case: "end",
      value: { state: cancelled ? "CANCELED" : "FAILED", error: { code, description: describe(failure) } },
    },
  });
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
