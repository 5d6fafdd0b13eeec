// harnesshost.v1.Turns/Exec: many Exec turns over one stream (docs/protocol.md §21). Invariants: each
// turn runs exactly as Sessions/Exec runs it with the `final` shape — the same handler, the stream's
// principal and metadata, so the same permission, project and limit checks — and is answered once,
// with its id: its packed frames then `last` with its status, or `last` with its error status alone;
// a turn's failure never ends the stream; at most `turnsPerStream` turns of one stream are in flight
// (answered or not yet written), more are refused RESOURCE_EXHAUSTED; a cancel, the stream's end or
// its client going away aborts the turns in flight; when the host stops, the stream takes no new turn
// and ends once its turns are answered; every turn gets one log line, its RPC metrics and (while
// tracing is on) a SERVER span, each as an Exec's.
import { status as GrpcStatus, Metadata } from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { ErrorCode, HostError } from "../errors/index.js";
import type { ExecRequest } from "../gen/agentsessions/v1/session_pb.js";
import { type TurnRequest, type TurnResponse, TurnResponseSchema, type Turns } from "../gen/harnesshost/v1/turns_pb.js";
import { overLimit } from "../limits/index.js";
import { AsyncQueue, EncodedResponse, statusOfError } from "../wire/index.js";
import type { CallContext, MethodsOf, ServiceImpl } from "../wire/index.js";
import { EXEC_UPDATES_HEADER } from "../wire/exec-updates.js";
import { type CallPolicyOptions, recordFinished } from "./call-policy.js";
import { REQUEST_ID_HEADER } from "./request-id.js";
import { contextFromHeaders, SpanKind, traced, tracingEnabled } from "../obs/trace.js";
import type { StreamBudget, StreamShare } from "./stream-budget.js";

/** Bytes an answer adds around its frames (id, flags, framing), for the stream buffer limits. */
const ANSWER_OVERHEAD = 64;

/**
 * The method path a turn is logged, counted and traced under: a turn is an Exec, whichever way it came
 * (its `turn` field says it came over a turn stream), so dashboards and traces keyed on Exec see it.
 */
export const TURN_METHOD = "/agentsessions.v1.Sessions/Exec";

/** The Exec handler a turn runs (Sessions' own, with its journal-health mapping). */
type ExecHandler = (req: ExecRequest, ctx: CallContext) => AsyncIterable<unknown>;

export interface TurnsOptions {
  readonly exec: ExecHandler;
  /**
   * The host's budget for answers waiting for clients that are not reading (streamBufferTotalBytes),
   * shared with Exec streams; one stream may hold at most `streamBufferBytes` of it.
   */
  readonly budget: StreamBudget;
  readonly streamBufferBytes: number;
  /** Turns of one stream in flight at once (limit turnsPerStream). */
  readonly turnsPerStream: number;
  /** Where each turn's log line and RPC metrics go: the Sessions listener's call policy. */
  readonly policy: CallPolicyOptions;
  /** Aborts when the host stops: streams take no new turn and end once their turns are answered. */
  readonly stopping: AbortSignal;
}

export function turnsService(opts: TurnsOptions): ServiceImpl<MethodsOf<typeof Turns>> {
  return {
    exec(requests, ctx) {
      return new TurnStream(opts, ctx).serve(requests);
    },
  };
}

/** One stream's turns in flight and its answers. */
class TurnStream {
  readonly #answers = new AsyncQueue<TurnResponse>();
  readonly #inFlight = new Map<bigint, AbortController>();
  #reading = true;
  /** Why the stream was cut off (a stream buffer limit), once it was. */
  #cutBy: HostError | undefined;
  /** This stream's share of the host's budget: the bytes of answers not yet taken for writing. */
  readonly #share: StreamShare;

  constructor(
    private readonly opts: TurnsOptions,
    private readonly ctx: CallContext,
  ) {
    // Cut (over streamBufferBytes, or the largest when streamBufferTotalBytes is reached): the stream
    // ends RESOURCE_EXHAUSTED and its turns stop.
    this.#share = opts.budget.open((err) => this.#cut(err));
  }

  serve(requests: AsyncIterable<TurnRequest>): AsyncIterable<TurnResponse> {
    // The frames of every turn are the `final` shape's (§20): the handler reads it from the metadata.
    this.ctx.metadata.set(EXEC_UPDATES_HEADER, "final");
    const onGone = (): void => {
      for (const turn of this.#inFlight.values()) turn.abort(this.#cutBy ?? this.ctx.signal.reason);
    };
    this.ctx.signal.addEventListener("abort", onGone, { once: true });
    const onStopping = (): void => this.#stopReading();
    if (this.opts.stopping.aborted) onStopping();
    else this.opts.stopping.addEventListener("abort", onStopping, { once: true });
    void this.#read(requests)
      .catch((err: unknown) => {
        // A request the stream cannot read (undecodable, id 0) ends it with that status; its turns stop.
        this.#answers.fail(err);
        onGone();
      })
      .finally(() => {
        this.opts.stopping.removeEventListener("abort", onStopping);
        this.#reading = false;
        this.#endIfDone();
      });
    this.#answers.onDiscard = () => {
      this.ctx.signal.removeEventListener("abort", onGone);
      onGone();
    };
    return this.#written();
  }

  async #read(requests: AsyncIterable<TurnRequest>): Promise<void> {
    for await (const req of requests) {
      if (!this.#reading) break;
      if (req.id === 0n) throw new HostError(ErrorCode.InvalidArgument, "a TurnRequest's id must not be 0");
      if (req.cancel) {
        this.#inFlight.get(req.id)?.abort(new HostError(ErrorCode.Cancelled, "turn cancelled by the client"));
        continue;
      }
      if (this.#inFlight.has(req.id)) {
        this.#answer(req.id, new HostError(ErrorCode.InvalidArgument, `turn ${req.id} is already in flight`));
        continue;
      }
      if (this.#inFlight.size >= this.opts.turnsPerStream) {
        this.#answer(
          req.id,
          overLimit(
            "turnsPerStream",
            this.opts.turnsPerStream,
            this.#inFlight.size + 1,
            "turns in flight on this stream",
          ),
        );
        continue;
      }
      const turn = new AbortController();
      this.#inFlight.set(req.id, turn);
      void this.#run(req, turn);
    }
  }

  /** Runs one turn and queues its answer; the turn stays in flight until its answer was taken. */
  async #run(req: TurnRequest, turn: AbortController): Promise<void> {
    const started = performance.now();
    const request = req.request;
    let code: number = GrpcStatus.OK;
    try {
      if (request === undefined) throw new HostError(ErrorCode.InvalidArgument, "a TurnRequest needs its request");
      const frames = await this.#traced(() => this.#framesOf(request, turn.signal));
      await this.#queue(create(TurnResponseSchema, { id: req.id, frames: Buffer.concat(frames), last: true }));
    } catch (err) {
      code = await this.#answer(req.id, err);
    } finally {
      this.#inFlight.delete(req.id);
      this.#log(req, code, performance.now() - started);
      this.#endIfDone();
    }
  }

  /** The turn's packed frames, from the Exec handler's `final` answer. */
  async #framesOf(request: ExecRequest, signal: AbortSignal): Promise<Uint8Array[]> {
    const frames: Uint8Array[] = [];
    for await (const answer of this.opts.exec(request, this.#turnContext(signal))) {
      if (!(answer instanceof EncodedResponse))
        throw new HostError(ErrorCode.Internal, "a turn answered with a frame the final shape does not send");
      frames.push(answer.bytes);
    }
    return frames;
  }

  /** Runs a turn in a SERVER span named as an Exec's, continuing the stream's trace context, while tracing is on. */
  #traced<T>(run: () => Promise<T>): Promise<T> {
    if (!tracingEnabled()) return run();
    const header = (key: string): string | undefined => {
      const v = this.ctx.metadata.get(key)[0];
      return typeof v === "string" ? v : undefined;
    };
    const requestId = header(REQUEST_ID_HEADER);
    return traced(
      TURN_METHOD.slice(1),
      () => ({
        "rpc.system": "grpc",
        "rpc.service": "agentsessions.v1.Sessions",
        "rpc.method": "Exec",
        "harnesshost.turn_stream": true,
        ...(requestId !== undefined ? { "harnesshost.request_id": requestId } : {}),
      }),
      run,
      contextFromHeaders(header),
      SpanKind.SERVER,
    );
  }

  /** Queues a turn's error answer; resolves to its status code. */
  async #answer(id: bigint, err: unknown): Promise<number> {
    const st = statusOfError(err, new Metadata());
    await this.#queue(create(TurnResponseSchema, { id, last: true, code: st.code, message: st.details }));
    return st.code;
  }

  /**
   * Resolves once the answer was taken for writing (the stream writes one message at a time); until
   * then its bytes are held in the stream's share of the host's budget.
   */
  async #queue(answer: TurnResponse): Promise<void> {
    const bytes = answer.frames.byteLength + answer.message.length + ANSWER_OVERHEAD;
    // One answer alone always goes (as Exec's closing frames do); answers that wait behind others are
    // what streamBufferBytes bounds.
    if (this.#share.held > 0 && this.#share.held + bytes > this.opts.streamBufferBytes) {
      this.#cut(
        overLimit(
          "streamBufferBytes",
          this.opts.streamBufferBytes,
          this.#share.held + bytes,
          "turn answers waiting for a client that is not reading",
        ),
      );
      return;
    }
    this.#share.hold(bytes);
    try {
      await this.#answers.send(answer);
    } catch {
      // a stream that went away, or was cut, takes nothing
    } finally {
      this.#share.release(bytes);
    }
  }

  /** Ends the stream with `err` (its answers waiting are dropped) and stops its turns. */
  #cut(err: HostError): void {
    this.#cutBy ??= err;
    this.#share.close();
    this.#answers.discard(err); // drops the answers waiting; stops the turns (onDiscard)
  }

  /** The answers as the stream writes them; a cut stream ends with its cut's error. */
  #written(): AsyncIterable<TurnResponse> {
    const answers = this.#answers;
    return {
      [Symbol.asyncIterator]: () => ({
        next: async (): Promise<IteratorResult<TurnResponse>> => {
          const r = await answers.next();
          if (r.done && this.#cutBy !== undefined) throw this.#cutBy;
          return r;
        },
        return: () => answers.return(),
      }),
    };
  }

  /** The Exec handler's view of one turn: the stream's metadata (principal, request id), the turn's signal. */
  #turnContext(signal: AbortSignal): CallContext {
    const ctx = this.ctx;
    return {
      metadata: ctx.metadata,
      signal,
      peer: ctx.peer,
      trailers: new Metadata(),
      sendHeader() {},
      deferHeader() {},
    };
  }

  #stopReading(): void {
    this.#reading = false;
    this.#endIfDone();
  }

  #endIfDone(): void {
    if (this.#reading || this.#inFlight.size > 0) return;
    this.#share.close();
    this.#answers.end();
  }

  #log(req: TurnRequest, code: number, ms: number): void {
    const [requestId] = this.ctx.metadata.get(REQUEST_ID_HEADER);
    recordFinished(this.opts.policy, {
      method: TURN_METHOD,
      code,
      ms,
      requestId: typeof requestId === "string" ? requestId : "",
      session: req.request?.session ?? "",
      extra: { turn: String(req.id) },
    });
  }
}
