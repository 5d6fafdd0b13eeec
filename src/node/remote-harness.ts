// The host side of the Harness protocol: a harness node reached over gRPC, seen as a Harness. Invariant:
// a turn succeeds only on an END{COMPLETED} of its own execution; every other ending (END FAILED or
// CANCELED, a host-only or foreign event, a stream closed without END, a lost transport) is an error,
// and the stream never outlives run(): after END the host half-closes and waits (at most
// END_CLOSE_WAIT_MS) for the node's OK status, and cancels the call on every other path. A turn the
// host parks on an approval gate is handed to the node as a park frame; the node must answer with
// exactly one matching EVENT_PARKED and close its stream, then run() rethrows the park (sticky
// ApprovalParkedError) so the controller parks the turn.
// With a node that negotiated incremental history (docs/protocol.md §8.8) a Start carries only the
// events past what the node confirmed it holds; the host believes that only after a completed turn.
// What one turn of a node may make the host do is bounded (TurnLimits: event size, events, bytes, model
// and tool calls): an event past a bound fails the turn RESOURCE_EXHAUSTED naming the limit before the
// host journals or acts on it. A full history too large for one Start frame is uploaded first, in
// chunks, to a node that offers PutHistory, and the Start then names it as an empty tail (§8.10), so
// a session's size is bounded by the node's history cache, not by one gRPC message.
import { traceHeaders, tracingEnabled } from "../obs/trace.js";
import { REQUEST_ID_HEADER } from "../wire/request-id.js";
import { randomBytes } from "node:crypto";
import { create, equals } from "@bufbuild/protobuf";
import type { Client } from "@grpc/grpc-js";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { EventKind, EventSchema } from "../gen/agentsessions/v1/common_pb.js";
import type { Event, Message } from "../gen/agentsessions/v1/common_pb.js";
import { ControllerFrameSchema, Harness as HarnessService } from "../gen/agentsessions/v1/harness_pb.js";
import type { ControllerFrame, HarnessDescriptor } from "../gen/agentsessions/v1/harness_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ErrorCode, HostError, errorCodeOfStatus } from "../errors/index.js";
import type { EventSink, Harness, ModelRequest, StartInfo } from "../sdk/types.js";
import { decisionOf, isApprovalParked, type ApprovalParkedError } from "../controller/approvals.js";
import { RpcError, abortError, createClient, dial } from "../wire/index.js";
import type { BidiCall, MethodsOf, ServiceClient } from "../wire/index.js";
import { HISTORY_BASE_HEADER, HISTORY_HELD_HEADER, HISTORY_TOKEN_HEADER, isStaleHistory } from "./history-headers.js";
import { overLimit } from "../limits/index.js";
import { eventBytes } from "../wire/event-bytes.js";
import type { HistoryUploader } from "./actors-client.js";
import { DEFAULT_NODE_LIMITS, END_CLOSE_WAIT_MS, type TurnLimits, UPLOAD_HISTORY_ABOVE_BYTES } from "./limits.js";

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
}

/** History sent by one RemoteHarness's Start frames (diagnostics and tests). */
export interface HistoryStats {
  /** Start frames sent, retries included. */
  readonly starts: number;
  /** Start frames that carried only a tail. */
  readonly tails: number;
  /** History events carried by all Start frames. */
  readonly eventsSent: number;
  /** Tails the node refused as stale, each followed by one full resend. */
  readonly resends: number;
  /** Full histories uploaded with PutHistory before their Start (§8.10). */
  readonly uploads: number;
}

/** What the host believes the node holds for this session: `count` events under `token`. */
interface HeldHistory {
  readonly token: string;
  readonly count: number;
  /** The last event held: a later history must carry it at the same position to be sent as a tail. */
  readonly last: Event;
}

/** How one Start sends its history: the events in the frame, the call metadata, what the node will hold. */
interface HistoryPlan {
  readonly events: Event[];
  readonly metadata: Readonly<Record<string, string>> | undefined;
  readonly hold: HeldHistory | undefined;
  readonly tail: boolean;
  /** Events to upload under `hold.token` before the Start (which then names them as an empty tail). */
  readonly upload?: { readonly uploader: HistoryUploader; readonly events: readonly Event[] };
}

/** END{FAILED|CANCELED} from a node: the harness's own failure, with the node's description. */
export class RemoteTurnError extends HostError {
  readonly state: string;
  readonly grpcCode: number;
  constructor(state: string, grpcCode: number, description: string) {
    super(
      grpcCode !== 0 ? errorCodeOfStatus(grpcCode) : state === "CANCELED" ? ErrorCode.Cancelled : ErrorCode.Internal,
      description,
    );
    this.state = state;
    this.grpcCode = grpcCode;
  }
}

/**
 * A connection suitable for RemoteHarness. The host only receives Events (and descriptors) on it, so its
 * receive limit is the largest Event a node may send (limit eventBytes): a larger frame is refused by
 * the transport before it is buffered whole.
 */
export function dialHarness(address: string, eventBytes: number = DEFAULT_NODE_LIMITS.eventBytes): Client {
  return dial(address, { channelOptions: { "grpc.max_receive_message_length": eventBytes } });
}

/** What one turn received so far, checked against TurnLimits as each event arrives. */
class TurnBudget {
  events = 0;
  bytes = 0;
  modelCalls = 0;
  toolCalls = 0;
  constructor(
    private readonly limits: TurnLimits,
    private readonly address: string,
  ) {}

  /** Counts the event (whose encoded size was `bytes`); RESOURCE_EXHAUSTED when it crosses a limit. */
  admit(event: Event, bytes: number): void {
    const l = this.limits;
    const from = `harness node at ${this.address}`;
    this.events += 1;
    this.bytes += bytes;
    if (this.events > l.turnEvents)
      throw overLimit("turnEvents", l.turnEvents, this.events, `events of one turn from ${from}`);
    if (this.bytes > l.turnBytes)
      throw overLimit("turnBytes", l.turnBytes, this.bytes, `bytes of one turn from ${from}`);
    if (event.kind === EventKind.EVENT_MODEL_CALL && ++this.modelCalls > l.turnModelCalls)
      throw overLimit("turnModelCalls", l.turnModelCalls, this.modelCalls, `model calls of one turn from ${from}`);
    if (event.kind === EventKind.EVENT_TOOL_CALL && ++this.toolCalls > l.turnToolCalls)
      throw overLimit("turnToolCalls", l.turnToolCalls, this.toolCalls, `tool calls of one turn from ${from}`);
  }
}

/** grpc-js's refusal of a frame above the channel's receive limit: "… larger than max (N vs. M)". */
function oversizedFrame(err: RpcError): number | undefined {
  if (err.grpcCode !== GrpcStatus.RESOURCE_EXHAUSTED) return undefined;
  const m = /larger than max \((\d+) vs\.? (\d+)\)/.exec(err.details);
  return m ? Number(m[1]) : undefined;
}

type HarnessClient = ServiceClient<MethodsOf<typeof HarnessService>>;
type ConnectCall = BidiCall<MessageInitShape<typeof ControllerFrameSchema>, Event>;

/** Statuses a node sends on purpose (the turn never started); anything else means the node was lost. */
const DELIBERATE_STATUSES: ReadonlySet<number> = new Set([
  GrpcStatus.INVALID_ARGUMENT,
  GrpcStatus.NOT_FOUND,
  GrpcStatus.ALREADY_EXISTS,
  GrpcStatus.FAILED_PRECONDITION,
  GrpcStatus.ABORTED,
  GrpcStatus.UNIMPLEMENTED,
  GrpcStatus.PERMISSION_DENIED,
  GrpcStatus.UNAUTHENTICATED,
]);

export class RemoteHarness implements Harness {
  readonly address: string;
  readonly session: string;
  readonly #connection: Client;
  readonly #ownsConnection: boolean;
  readonly #client: HarnessClient;
  readonly #describeTimeoutMs: number;
  readonly #incremental: () => boolean;
  readonly #limits: TurnLimits;
  /** Set only by a completed turn whose node confirmed the hold; cleared when any turn starts. */
  #held: HeldHistory | undefined;
  readonly #stats = { starts: 0, tails: 0, eventsSent: 0, resends: 0, uploads: 0 };
  readonly #uploader: () => HistoryUploader | undefined;

  constructor(opts: RemoteHarnessOptions) {
    this.address = opts.address;
    this.session = opts.session;
    this.#describeTimeoutMs = opts.describeTimeoutMs ?? DEFAULT_NODE_LIMITS.nodeCallMs;
    const incremental = opts.incrementalHistory ?? false;
    this.#incremental = typeof incremental === "function" ? incremental : () => incremental;
    this.#limits = opts.limits ?? DEFAULT_NODE_LIMITS;
    this.#uploader = opts.historyUpload ?? (() => undefined);
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
    return { ...this.#stats };
  }

  /** Sends the full history next time (the actor was dropped or restored, or the node replaced). */
  forgetHistory(): void {
    this.#held = undefined;
  }

  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    if (start.executionId === "") throw new HostError(ErrorCode.InvalidArgument, "Start requires an execution_id");
    if (signal.aborted) throw abortError(signal);
    const history = start.history;
    const plan = this.#plan(history);
    // Forgotten until this turn completes: a failed, parked or cancelled turn leaves nothing believed.
    this.#held = undefined;
    const outcome = await this.#turn(start, plan, sink, signal);
    if (outcome !== "stale") {
      this.#held = outcome;
      return;
    }
    // The node refused the tail before running anything: one full resend on a new stream.
    this.#stats.resends += 1;
    const full = await this.#turn(start, this.#fullPlan(history), sink, signal);
    if (full === "stale") throw new HostError(ErrorCode.Internal, "harness node refused a full history as stale");
    this.#held = full;
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
    if (plan.upload !== undefined && plan.hold !== undefined) {
      this.#stats.uploads += 1;
      const held = await plan.upload.uploader
        .putHistory(this.session, plan.hold.token, plan.upload.events, { signal })
        .catch((err: unknown) => Promise.reject(this.#lost(err, signal)));
      if (held !== plan.upload.events.length) {
        throw new HostError(
          ErrorCode.Internal,
          `harness node at ${this.address} holds ${held} of the ${plan.upload.events.length} history events uploaded`,
        );
      }
    }
    let heldHeader: string | undefined;
    const budget = new TurnBudget(this.#limits, this.address);
    // Encoded sizes of the frames received and not yet taken, in arrival order (the call buffers ahead).
    const frameBytes: number[] = [];
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
    const events = call[Symbol.asyncIterator]();
    const transport = <T>(p: Promise<T>): Promise<T> =>
      p.catch((err: unknown) => Promise.reject(this.#lost(err, signal)));
    let received = 0;
    let closed = false;
    try {
      this.#stats.starts += 1;
      this.#stats.eventsSent += plan.events.length;
      if (plan.tail) this.#stats.tails += 1;
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
        const event = next.value;
        budget.admit(event, frameBytes.shift() ?? 0);
        if (event.executionId !== start.executionId) {
          throw new HostError(ErrorCode.Internal, `event execution_id mismatch: ${JSON.stringify(event.executionId)}`);
        }
        let reply: Awaited<ReturnType<RemoteHarness["dispatch"]>>;
        try {
          reply = await this.dispatch(event, sink, signal);
        } catch (err) {
          if (!isApprovalParked(err)) throw err;
          await this.#exchangePark(err, call, events, start.executionId, transport);
          throw err;
        }
        if (reply === "end") {
          closed = await closeAfterEnd(call, events);
          return plan.hold !== undefined && heldHeader === String(plan.hold.count) ? plan.hold : undefined;
        }
        for (const frame of reply) {
          await transport(call.send({ session: this.session, executionId: start.executionId, frame }));
        }
      }
    } finally {
      // Every failure path, and a node that did not finish the stream after END, ends the call here.
      if (!closed) call.cancel();
      void events.return?.();
    }
  }

  /**
   * The history plan of a Start: nothing negotiated (or nothing to send) — the full history and no
   * metadata; a history that extends what the node holds — the tail; anything else — the full history
   * under a fresh token. Histories are windows of one session's journal that only grow until a
   * compaction moves their start (docs/protocol.md §16.4), so a history that carries the held last
   * event (an END or lifecycle record, unique in the session) at the held position extends the held
   * events; after a compaction it does not, and the full window is sent under a fresh token.
   */
  #plan(history: readonly Event[]): HistoryPlan {
    const held = this.#held;
    if (
      this.#incremental() &&
      this.session !== "" &&
      held !== undefined &&
      held.count <= history.length &&
      sameEvent(history[held.count - 1], held.last)
    ) {
      return {
        events: history.slice(held.count),
        metadata: { [HISTORY_TOKEN_HEADER]: held.token, [HISTORY_BASE_HEADER]: String(held.count) },
        hold: { token: held.token, count: history.length, last: history[history.length - 1] ?? held.last },
        tail: true,
      };
    }
    return this.#fullPlan(history);
  }

  #fullPlan(history: readonly Event[]): HistoryPlan {
    const last = history[history.length - 1];
    if (!this.#incremental() || this.session === "" || last === undefined) {
      return { events: [...history], metadata: undefined, hold: undefined, tail: false };
    }
    const token = randomBytes(16).toString("hex");
    const hold = { token, count: history.length, last };
    const uploader = this.#uploader();
    if (uploader !== undefined && exceedsBytes(history, UPLOAD_HISTORY_ABOVE_BYTES)) {
      // Uploaded in chunks first; the Start then names all of it as held, with an empty tail.
      return {
        events: [],
        metadata: { [HISTORY_TOKEN_HEADER]: token, [HISTORY_BASE_HEADER]: String(history.length) },
        hold,
        tail: true,
        upload: { uploader, events: history },
      };
    }
    return { events: [...history], metadata: { [HISTORY_TOKEN_HEADER]: token }, hold, tail: false };
  }

  /**
   * Sends the park and requires exactly one EVENT_PARKED with the same tuple followed by the end of
   * the stream; anything else fails the exchange (the durable request stays recoverable either way).
   */
  async #exchangePark(
    parked: ApprovalParkedError,
    call: ConnectCall,
    events: AsyncIterator<Event>,
    executionId: string,
    transport: <T>(p: Promise<T>) => Promise<T>,
  ): Promise<void> {
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

  /** Acts on one event; returns the reply frames for blocking calls, or "end" on END COMPLETED. */
  private async dispatch(
    event: Event,
    sink: EventSink,
    signal: AbortSignal,
  ): Promise<ControllerFrame["frame"][] | "end"> {
    const kind = event.kind;
    const body = event.body;
    switch (kind) {
      case EventKind.EVENT_MODEL_CALL: {
        if (body.case !== "model") throw malformed(kind);
        const mc = body.value;
        const request: ModelRequest = {
          model: mc.model,
          params: mc.params,
          messages: mc.messages,
          tools: mc.tools,
          ...(mc.toolChoice !== undefined ? { toolChoice: mc.toolChoice } : {}),
        };
        const response = await sink.model(request, signal);
        const value = create(ControllerFrameSchema, {
          frame: {
            case: "model",
            value: {
              message: response.message,
              modelCallId: mc.id,
              ...(response.usage !== undefined ? { usage: response.usage } : {}),
            },
          },
        }).frame;
        return [value];
      }
      case EventKind.EVENT_OUTPUT:
        if (body.case !== "message") throw malformed(kind);
        await sink.output(textOf(body.value), signal);
        return [];
      case EventKind.EVENT_TOOL_CALL: {
        if (body.case !== "tool") throw malformed(kind);
        const result = await sink.toolCall(body.value, signal);
        const tool = create(ControllerFrameSchema, { frame: { case: "tool", value: result } }).frame;
        const decision = decisionOf(result);
        if (decision === undefined) return [tool];
        // A decided gate: the decision first, then the receipt (wire-contract §8.4 step 6).
        const approval = create(ControllerFrameSchema, {
          frame: {
            case: "approval",
            value: {
              toolCallId: decision.toolCallId,
              approved: decision.approved,
              reason: decision.reason,
              requestSeq: BigInt(decision.requestSeq),
            },
          },
        }).frame;
        return [approval, tool];
      }
      case EventKind.EVENT_TOOL_RESULT:
        if (body.case !== "result") throw malformed(kind);
        await sink.report(body.value, signal);
        return [];
      case EventKind.EVENT_USAGE:
        if (body.case !== "usage") throw malformed(kind);
        await sink.usage(body.value, signal);
        return [];
      case EventKind.EVENT_END: {
        if (body.case !== "end") throw malformed(kind);
        const end = body.value;
        if (end.state === "COMPLETED") return "end";
        throw new RemoteTurnError(
          end.state,
          end.error?.code ?? 0,
          end.error?.description || `harness ended the turn ${end.state || "without a state"}`,
        );
      }
      case EventKind.EVENT_ERROR: {
        const error = body.case === "error" ? body.value : undefined;
        const code = error?.code ?? 0;
        throw new HostError(
          code !== 0 ? errorCodeOfStatus(code) : ErrorCode.Internal,
          `remote harness reported an error: ${error?.description ?? "(no description)"}`,
        );
      }
      case EventKind.EVENT_INPUT:
      case EventKind.EVENT_APPROVAL_REQUEST:
      case EventKind.EVENT_APPROVAL_RESULT:
      case EventKind.EVENT_LIFECYCLE:
      case EventKind.EVENT_EXECUTION_START:
      case EventKind.EVENT_PARKED:
        throw new HostError(ErrorCode.Internal, `harness emitted host-only event kind ${EventKind[kind]}`);
      case EventKind.EVENT_KIND_UNSPECIFIED:
        throw new HostError(ErrorCode.Internal, "harness emitted an event without a kind");
      default: {
        const unknown: never = kind;
        throw new HostError(ErrorCode.Internal, `harness emitted unknown event kind ${String(unknown)}`);
      }
    }
  }

  /** A failure of the stream itself: the caller's cancel, a refusal by the node, or a lost node. */
  #lost(err: unknown, signal: AbortSignal): HostError {
    if (signal.aborted) return abortError(signal);
    if (err instanceof RpcError) {
      const oversized = oversizedFrame(err);
      if (oversized !== undefined) {
        const limit = this.#limits.eventBytes;
        return overLimit("eventBytes", limit, oversized, `an event from harness node at ${this.address}`);
      }
      if (err.grpcCode === GrpcStatus.ABORTED) {
        return new HostError(ErrorCode.SessionBusy, `harness node refused the turn: ${err.details}`, { cause: err });
      }
      if (DELIBERATE_STATUSES.has(err.grpcCode)) return err;
      return new HostError(ErrorCode.Internal, `harness lost mid-turn: ${err.details}`, { cause: err });
    }
    if (err instanceof HostError) return err;
    return new HostError(
      ErrorCode.Internal,
      `harness lost mid-turn: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}

/**
 * After END: half-closes and waits (at most END_CLOSE_WAIT_MS) for the node to finish the stream with
 * OK. True when it did, so the call needs no cancel (which would build a CANCELLED error per turn).
 */
async function closeAfterEnd(call: ConnectCall, events: AsyncIterator<Event>): Promise<boolean> {
  try {
    call.end();
  } catch {
    return false;
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(resolve, END_CLOSE_WAIT_MS, false);
  });
  try {
    return await Promise.race([
      events.next().then(
        (n) => n.done === true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether the events encode to more than `limit` bytes (stops counting once they do). */
function exceedsBytes(events: readonly Event[], limit: number): boolean {
  let bytes = 0;
  for (const e of events) {
    bytes += eventBytes(e);
    if (bytes > limit) return true;
  }
  return false;
}

function sameEvent(a: Event | undefined, b: Event): boolean {
  return a === b || (a !== undefined && equals(EventSchema, a, b));
}

/** The text parts of a message, concatenated (non-text parts do not travel as OUTPUT text). */
function textOf(message: Message): string {
  let text = "";
  for (const p of message.parts) if (p.part.case === "text") text += p.part.value.text;
  return text;
}

function malformed(kind: EventKind): HostError {
  return new HostError(ErrorCode.Internal, `harness sent a malformed ${EventKind[kind]} event`);
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
