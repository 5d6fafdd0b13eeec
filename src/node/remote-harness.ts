// The host side of the Harness protocol: a harness node reached over gRPC, seen as a Harness. This
// module is the stream protocol; what a Start sends of the history is history-sync.ts, what each event
// makes the host do is harness-calls.ts, the per-turn bounds turn-budget.ts and how a lost stream is
// reported stream-loss.ts. Invariant: a turn succeeds only on an END{COMPLETED} of its own execution;
// every other ending (END FAILED or CANCELED, a host-only or foreign event, a stream closed without END,
// a lost transport) is an error. run() returns at END{COMPLETED}; the stream then finishes behind it —
// the host half-closes and waits (at most END_CLOSE_WAIT_MS) for the node's status, then cancels — and
// the session's next node call waits for that (stream-order.ts, docs/protocol.md §4.6), so a session's
// stream never outlives the start of its next call. Every other path cancels the call before run()
// settles. A turn the host parks on an approval gate is handed to the node as a park frame; the node must
// answer with exactly one matching EVENT_PARKED and close its stream, then run() rethrows the park
// (sticky ApprovalParkedError) so the controller parks the turn. A tail the node refuses as stale
// before running anything is resent once in full on a new stream.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@grpc/grpc-js";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { type ApprovalParkedError, isApprovalParked } from "../controller/approvals.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import { EventKind } from "../gen/agentsessions/v1/common_pb.js";
import type { HarnessDescriptor } from "../gen/agentsessions/v1/harness_pb.js";
import { type ControllerFrameSchema, Harness as HarnessService } from "../gen/agentsessions/v1/harness_pb.js";
import { DEFAULT_LIMITS } from "../limits/index.js";
import { clipForLog, type Log } from "../obs/op-log.js";
import { traceHeaders, tracingEnabled } from "../obs/trace.js";
import type { EventSink, Harness, StartInfo } from "../harness/types.js";
import type { BidiCall, MethodsOf, ServiceClient } from "../wire/index.js";
import { RpcError, abortError, createClient, dial } from "../wire/index.js";
import { REQUEST_ID_HEADER } from "../wire/request-id.js";
import type { HistoryUploader } from "./actors-client.js";
import { type CallReply, callHost } from "./harness-calls.js";
import { HISTORY_HELD_HEADER, isStaleHistory } from "./history-headers.js";
import { type HeldHistory, type HistoryPlan, type HistoryStats, HistorySync } from "./history-sync.js";
import { DEFAULT_NODE_LIMITS, END_CLOSE_WAIT_MS, NODE_CHANNEL_OPTIONS, type TurnLimits } from "./limits.js";
import { streamLoss } from "./stream-loss.js";
import { SESSION_STREAMS, type SessionStreams } from "./stream-order.js";
import { TurnBudget } from "./turn-budget.js";

export { RemoteTurnError } from "./harness-calls.js";
export type { HistoryStats } from "./history-sync.js";

export interface RemoteHarnessOptions {
  /** The node's address (see parseAddress). */
  readonly address: string;
  /** The session whose actor serves the turns. */
  readonly session: string;
  /** Sent with every call (e.g. an incarnation's call metadata). */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Deadline of Describe; default DEFAULT_NODE_LIMITS.nodeCallMs. */
  readonly describeTimeoutMs?: number;
  /**
   * A connection to share (e.g. one per node for all its sessions); close() then leaves it open.
   * Default: a connection of this harness's own.
   */
  readonly connection?: Client;
  /**
   * Whether the node answered NodeInfo with incremental_history (docs/protocol.md §8.8); a function is
   * read at every turn. Default false: every Start carries the full history, as to a reference node.
   */
  readonly incrementalHistory?: boolean | (() => boolean);
  /** What one turn may make the host do; default DEFAULT_NODE_LIMITS. */
  readonly limits?: TurnLimits;
  /**
   * The node's PutHistory, when it offered it (docs/protocol.md §8.10); read at every full send. Needs
   * incrementalHistory. Default: none — full histories always ride in the Start frame.
   */
  readonly historyUpload?: () => HistoryUploader | undefined;
  /**
   * Where a failed node call (Connect, PutHistory, Describe) is logged at warn with the call's name,
   * its code and the turn's request_id and execution id; default: nowhere. A call the host itself
   * cancelled, or a turn parked on a gate, is not a failure.
   */
  readonly log?: Log;
  /**
   * Where this session's stream still ending after END is recorded, and waited for before the next
   * Start or PutHistory (docs/protocol.md §4.6 item 9); default the process's one SessionStreams, which the
   * ActorsClient of the same address also waits on.
   */
  readonly streams?: SessionStreams;
}

/**
 * A connection suitable for RemoteHarness. The host only receives Events (and descriptors) on it, so its
 * receive limit is the largest Event a node may send (limit eventBytes): a larger frame is refused by
 * the transport before it is buffered whole.
 */
export function dialHarness(address: string, eventBytes: number = DEFAULT_NODE_LIMITS.eventBytes): Client {
  return dial(address, { channelOptions: { ...NODE_CHANNEL_OPTIONS, "grpc.max_receive_message_length": eventBytes } });
}

type HarnessClient = ServiceClient<MethodsOf<typeof HarnessService>>;
type ConnectCall = BidiCall<MessageInitShape<typeof ControllerFrameSchema>, Event>;
type Transport = <T>(p: Promise<T>) => Promise<T>;

/** One open Connect stream of one turn. */
interface TurnStream {
  readonly call: ConnectCall;
  readonly events: AsyncIterator<Event>;
  readonly transport: Transport;
  /** The node's HISTORY_HELD header, once its headers arrived. */
  held(): string | undefined;
}

export class RemoteHarness implements Harness {
  readonly address: string;
  readonly session: string;
  readonly #connection: Client;
  readonly #ownsConnection: boolean;
  readonly #client: HarnessClient;
  readonly #describeTimeoutMs: number;
  readonly #limits: TurnLimits;
  readonly #history: HistorySync;
  readonly #log: Log | undefined;
  readonly #streams: SessionStreams;

  constructor(opts: RemoteHarnessOptions) {
    this.#log = opts.log;
    this.#streams = opts.streams ?? SESSION_STREAMS;
    this.address = opts.address;
    this.session = opts.session;
    this.#describeTimeoutMs = opts.describeTimeoutMs ?? DEFAULT_NODE_LIMITS.nodeCallMs;
    const incremental = opts.incrementalHistory ?? false;
    this.#history = new HistorySync(
      opts.session,
      typeof incremental === "function" ? incremental : () => incremental,
      opts.historyUpload ?? (() => undefined),
    );
    this.#limits = opts.limits ?? DEFAULT_NODE_LIMITS;
    this.#ownsConnection = opts.connection === undefined;
    this.#connection = opts.connection ?? dialHarness(opts.address, this.#limits.eventBytes);
    this.#client = createClient(HarnessService, this.#connection, {
      ...(opts.metadata !== undefined ? { metadata: opts.metadata } : {}),
    });
  }

  /** Unavailable when the node cannot be reached or does not answer in time (admission). */
  async describe(signal?: AbortSignal): Promise<HarnessDescriptor> {
    try {
      return await this.#client.describe(
        {},
        { timeoutMs: this.#describeTimeoutMs, ...(signal !== undefined ? { signal } : {}) },
      );
    } catch (err) {
      if (!signal?.aborted) this.#failed("Harness.Describe", err, undefined);
      if (
        err instanceof RpcError &&
        (err.grpcCode === GrpcStatus.UNAVAILABLE || err.grpcCode === GrpcStatus.DEADLINE_EXCEEDED)
      ) {
        throw new HostError(ErrorCode.Unavailable, `harness node at ${this.address} unavailable: ${err.details}`, {
          cause: err,
        });
      }
      throw err;
    }
  }

  /** History sent so far (a snapshot of the counters). */
  get historyStats(): HistoryStats {
    return this.#history.stats;
  }

  /** Sends the full history next time (the actor was dropped or restored, or the node replaced). */
  forgetHistory(): void {
    this.#history.forget();
  }

  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    this.#calling = "Harness.Connect";
    try {
      await this.#run(start, sink, signal);
    } catch (err) {
      if (!signal.aborted && !isApprovalParked(err)) this.#failed(this.#calling, err, start);
      throw err;
    }
  }

  /** The node call a failure of run() happened in (PutHistory before the stream, Connect after). */
  #calling = "Harness.Connect";

  /** A failed node call, at warn: which call, its code, and the turn it served. */
  #failed(call: string, err: unknown, start: StartInfo | undefined): void {
    const log = this.#log;
    if (!log?.isLevelEnabled("warn")) return;
    const max = DEFAULT_LIMITS.logFieldChars;
    const code = err instanceof HostError ? err.code : err instanceof RpcError ? GrpcStatus[err.grpcCode] : "UNKNOWN";
    log.warn(
      {
        call,
        code,
        address: clipForLog(this.address, max),
        ...(start?.requestId !== undefined ? { request_id: clipForLog(start.requestId, max) } : {}),
        ...(start !== undefined ? { turn: clipForLog(start.executionId, max) } : {}),
        reason: clipForLog(err instanceof Error ? err.message : String(err), 4 * max),
      },
      "node call failed",
    );
  }

  async #run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    if (start.executionId === "") throw new HostError(ErrorCode.InvalidArgument, "Start requires an execution_id");
    if (signal.aborted) throw abortError(signal);
    const history = start.history;
    const plan = this.#history.plan(history);
    // Forgotten until this turn completes: a failed, parked or cancelled turn leaves nothing believed.
    this.#history.forget();
    const outcome = await this.#turn(start, plan, sink, signal);
    if (outcome !== "stale") return this.#history.completed(outcome);
    // The node refused the tail before running anything: one full resend on a new stream.
    this.#history.noteResend();
    const full = await this.#turn(start, this.#history.fullPlan(history), sink, signal);
    if (full === "stale") throw new HostError(ErrorCode.Internal, "harness node refused a full history as stale");
    this.#history.completed(full);
  }

  /**
   * One Connect stream. Resolves to what the node now holds (after END COMPLETED), or "stale" when the
   * node refused a tail before sending any event; every other ending throws.
   */
  async #turn(
    start: StartInfo,
    plan: HistoryPlan,
    sink: EventSink,
    signal: AbortSignal,
  ): Promise<HeldHistory | undefined | "stale"> {
    // §4.6 item 9: the session's previous stream has ended before anything of this turn reaches the node.
    await this.#streams.ended(this.address, this.session, signal);
    await this.#upload(plan, signal);
    const budget = new TurnBudget(this.#limits, this.address);
    // Encoded sizes of the frames received and not yet taken, in arrival order (the call buffers ahead).
    const frameBytes: number[] = [];
    const stream = this.#open(start, plan, signal, frameBytes);
    const { call, events, transport } = stream;
    let received = 0;
    let handedOff = false;
    try {
      this.#history.noteStart(plan);
      await transport(call.send(this.#startFrame(start, plan.events)));
      for (;;) {
        let next: IteratorResult<Event>;
        try {
          next = await events.next();
        } catch (err) {
          if (plan.tail && received === 0 && !signal.aborted && isStaleHistory(err)) return "stale";
          throw this.#lost(err, signal);
        }
        if (next.done === true) throw new HostError(ErrorCode.Internal, "harness stream closed without END");
        received += 1;
        budget.admit(next.value, frameBytes.shift() ?? 0);
        const reply = await this.#answer(next.value, start.executionId, sink, signal, stream);
        if (reply === "end") {
          // The turn is over at END: the stream finishes behind it and the session's next call waits.
          handedOff = true;
          this.#streams.ending(this.address, this.session, this.#finish(call, events, start, signal));
          return plan.hold !== undefined && stream.held() === String(plan.hold.count) ? plan.hold : undefined;
        }
        for (const frame of reply)
          await transport(call.send({ session: this.session, executionId: start.executionId, frame }));
      }
    } finally {
      // Every failure path ends the call here, before run() settles.
      if (!handedOff) {
        call.cancel();
        void events.return?.();
      }
    }
  }

  /**
   * After END: lets the node finish the stream (closeAfterEnd), cancels it if it did not, and never
   * rejects. A non-OK status after END does not undo the turn — END is what the turn committed on — so
   * it is logged as a failed Harness.Connect call (warn) and otherwise ignored, as it was while run()
   * still waited for it.
   */
  async #finish(call: ConnectCall, events: AsyncIterator<Event>, start: StartInfo, signal: AbortSignal): Promise<void> {
    const ending = await closeAfterEnd(call, events);
    if (ending !== "ok") call.cancel();
    void events.return?.();
    if (ending instanceof Error && !signal.aborted) this.#failed("Harness.Connect", ending, start);
  }

  /** A large full history goes to the node's PutHistory before its Start (§8.10). */
  async #upload(plan: HistoryPlan, signal: AbortSignal): Promise<void> {
    if (plan.upload === undefined || plan.hold === undefined) return;
    this.#history.noteUpload();
    this.#calling = "Actors.PutHistory";
    const held = await plan.upload.uploader
      .putHistory(this.session, plan.hold.token, plan.upload.events, { signal })
      .catch((err: unknown) => {
        // A missed historyUploadMs is the node's silence, named as such — not a lost harness.
        if (!signal.aborted && err instanceof RpcError && err.grpcCode === GrpcStatus.DEADLINE_EXCEEDED)
          throw new HostError(ErrorCode.DeadlineExceeded, err.details, { cause: err });
        throw this.#lost(err, signal);
      });
    this.#calling = "Harness.Connect";
    if (held !== plan.upload.events.length) {
      throw new HostError(
        ErrorCode.Internal,
        `harness node at ${this.address} holds ${held} of the ${plan.upload.events.length} history events uploaded`,
      );
    }
  }

  /** Opens the turn's Connect stream, with the history and correlation metadata. */
  #open(start: StartInfo, plan: HistoryPlan, signal: AbortSignal, frameBytes: number[]): TurnStream {
    let heldHeader: string | undefined;
    const correlation = correlationHeaders(start.requestId);
    const metadata = correlation ? { ...plan.metadata, ...correlation } : plan.metadata;
    const call: ConnectCall = this.#client.connect({
      signal,
      onResponseBytes: (n) => void frameBytes.push(n),
      ...(metadata !== undefined ? { metadata } : {}),
      ...(plan.metadata !== undefined
        ? {
            onHeader: (md) => {
              const v = md.get(HISTORY_HELD_HEADER)[0];
              heldHeader = typeof v === "string" ? v : undefined;
            },
          }
        : {}),
    });
    return {
      call,
      events: call[Symbol.asyncIterator](),
      transport: (p) => p.catch((err: unknown) => Promise.reject(this.#lost(err, signal))),
      held: () => heldHeader,
    };
  }

  /** The host's answer to one event of this turn; a park is exchanged with the node, then rethrown. */
  async #answer(
    event: Event,
    executionId: string,
    sink: EventSink,
    signal: AbortSignal,
    stream: TurnStream,
  ): Promise<CallReply> {
    if (event.executionId !== executionId) {
      throw new HostError(ErrorCode.Internal, `event execution_id mismatch: ${JSON.stringify(event.executionId)}`);
    }
    try {
      return await this.dispatch(event, sink, signal);
    } catch (err) {
      if (!isApprovalParked(err)) throw err;
      await this.#exchangePark(err, stream, executionId);
      throw err;
    }
  }

  /** Acts on one event (harness-calls.ts); a method so profiles can time it. */
  private dispatch(event: Event, sink: EventSink, signal: AbortSignal): Promise<CallReply> {
    return callHost(event, sink, signal);
  }

  /**
   * Sends the park and requires exactly one EVENT_PARKED with the same tuple followed by the end of
   * the stream; anything else fails the exchange (the durable request stays recoverable either way).
   */
  async #exchangePark(parked: ApprovalParkedError, stream: TurnStream, executionId: string): Promise<void> {
    const { call, events, transport } = stream;
    const ref = parked.ref;
    await transport(
      call.send({
        session: this.session,
        executionId,
        frame: {
          case: "park",
          value: { executionId: ref.executionId, toolCallId: ref.toolCallId, requestSeq: BigInt(ref.requestSeq) },
        },
      }),
    );
    const ack = await transport(events.next());
    if (ack.done === true)
      throw new HostError(ErrorCode.Internal, "harness closed the stream without acknowledging the park");
    const ev = ack.value;
    const got = ev.body.case === "parked" ? ev.body.value : undefined;
    if (
      ev.kind !== EventKind.EVENT_PARKED ||
      !got ||
      got.executionId !== ref.executionId ||
      got.toolCallId !== ref.toolCallId ||
      Number(got.requestSeq) !== ref.requestSeq
    ) {
      throw new HostError(
        ErrorCode.Internal,
        `harness answered the park with ${EventKind[ev.kind] ?? ev.kind} instead of a matching EVENT_PARKED`,
      );
    }
    const end = await transport(events.next());
    if (end.done !== true) throw new HostError(ErrorCode.Internal, "harness kept the stream open after EVENT_PARKED");
  }

  /** Closes the connection. */
  close(): void {
    this.#client.close();
    if (this.#ownsConnection) this.#connection.close();
  }

  #startFrame(start: StartInfo, history: Event[]): MessageInitShape<typeof ControllerFrameSchema> {
    const identity = start.identity;
    return {
      session: this.session,
      executionId: start.executionId,
      frame: {
        case: "start",
        value: {
          config: start.config,
          history,
          inputs: [...start.inputs],
          resumeFromSeq: BigInt(start.resumeFromSeq),
          ...(identity !== undefined
            ? {
                identity: {
                  ...(identity.principal !== undefined ? { principal: identity.principal } : {}),
                  canMintTokens: identity.canMintTokens,
                },
              }
            : {}),
        },
      },
    };
  }

  #lost(err: unknown, signal: AbortSignal): HostError {
    return streamLoss(err, signal, this.#limits.eventBytes, this.address);
  }
}

/**
 * After END: half-closes and waits (at most END_CLOSE_WAIT_MS) for the node to finish the stream. "ok"
 * when it ended with OK (the call needs no cancel, which would build a CANCELLED error per turn); the
 * node's error when it ended with another status; "open" when it sent more or had not ended in time.
 */
async function closeAfterEnd(call: ConnectCall, events: AsyncIterator<Event>): Promise<"ok" | "open" | Error> {
  try {
    call.end();
  } catch {
    return "open";
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"open">((resolve) => {
    timer = setTimeout(resolve, END_CLOSE_WAIT_MS, "open");
  });
  try {
    return await Promise.race([
      events.next().then(
        (n): "ok" | "open" => (n.done === true ? "ok" : "open"),
        (err: unknown): Error => (err instanceof Error ? err : new Error(String(err))),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What a Connect call carries for correlation: the turn's x-request-id and, while tracing is on, the
 * active span's W3C trace context (so the node's spans continue the host's trace). Undefined when
 * there is neither (the usual case with tracing off: nothing allocated).
 */
function correlationHeaders(requestId: string | undefined): Record<string, string> | undefined {
  const trace = tracingEnabled() ? traceHeaders() : undefined;
  if (requestId === undefined && trace === undefined) return undefined;
  return { ...trace, ...(requestId !== undefined ? { [REQUEST_ID_HEADER]: requestId } : {}) };
}
