// The client's end of the turn stream (docs/protocol.md §21). Invariants: one stream per client, opened
// on its first turn and again after it ended; each turn is sent with an id unique on its stream and
// settles exactly once — with its frames, its own error status, CANCELLED when its signal aborted (a
// cancel is sent for it), or the stream's failure — and is never sent twice; a host that does not serve
// the stream (UNIMPLEMENTED before it answered anything) ran nothing, and every turn then goes through
// Sessions/Exec instead, for good.
import { create } from "@bufbuild/protobuf";
import { Metadata, status as GrpcStatus } from "@grpc/grpc-js";
import type { ExecRequest } from "../gen/agentsessions/v1/session_pb.js";
import { TurnRequestSchema, type TurnResponse, type Turns } from "../gen/harnesshost/v1/turns_pb.js";
import type { BidiCall, ServiceClient } from "../wire/client.js";
import type { MethodsOf } from "../wire/service.js";
import { abortError, rpcErrorOfStatus } from "../wire/status.js";
import { clientError, ErrorCode, HarnessHostError } from "./errors.js";

/** What `turn` resolves to when the host does not serve the stream: use Sessions/Exec. */
export const NOT_SERVED = Symbol("the host serves no turn stream");

interface Pending {
  readonly frames: Uint8Array[];
  resolve(frames: Uint8Array[] | typeof NOT_SERVED): void;
  reject(err: HarnessHostError): void;
}

type Stub = ServiceClient<MethodsOf<typeof Turns>>;

export class TurnStream {
  #call: BidiCall<{ id: bigint; request?: ExecRequest; cancel?: boolean }, TurnResponse> | undefined;
  readonly #pending = new Map<bigint, Pending>();
  #nextId = 1n;
  #answered = false;
  #notServed = false;
  #closed = false;

  constructor(private readonly stub: Stub) {}

  /** Whether turns may go over the stream (false once the host was seen not to serve it). */
  get served(): boolean {
    return !this.#notServed && !this.#closed;
  }

  /**
   * Runs one turn over the stream; resolves to its answers' packed frames, or NOT_SERVED when the host
   * does not serve the stream (nothing ran). Rejects with the turn's error.
   */
  turn(request: ExecRequest, signal?: AbortSignal): Promise<Uint8Array[] | typeof NOT_SERVED> {
    if (!this.served) return Promise.resolve(NOT_SERVED);
    if (signal?.aborted === true) return Promise.reject(clientError(abortError(signal)));
    const call = this.#open();
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.#pending.delete(id)) return;
        void call.send(create(TurnRequestSchema, { id, cancel: true })).catch(() => undefined);
        reject(clientError(abortError(signal as AbortSignal)));
      };
      const done = (): void => signal?.removeEventListener("abort", onAbort);
      this.#pending.set(id, {
        frames: [],
        resolve: (v) => {
          done();
          resolve(v);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      call.send(create(TurnRequestSchema, { id, request })).catch((err: unknown) => this.#settle(id, err));
    });
  }

  /** Half-closes the stream: the host answers the turns in flight, then ends it. */
  close(): void {
    this.#closed = true;
    this.#call?.end();
  }

  #open(): BidiCall<{ id: bigint; request?: ExecRequest; cancel?: boolean }, TurnResponse> {
    if (this.#call !== undefined) return this.#call;
    const call = this.stub.exec();
    this.#call = call;
    this.#answered = false; // whether this stream answered: an UNIMPLEMENTED before that ran nothing
    void this.#read(call);
    return call;
  }

  async #read(call: BidiCall<{ id: bigint; request?: ExecRequest; cancel?: boolean }, TurnResponse>): Promise<void> {
    let failure: unknown;
    try {
      for await (const answer of call) {
        this.#answered = true;
        const pending = this.#pending.get(answer.id);
        if (pending === undefined) continue; // a cancelled turn's late answer
        if (answer.frames.byteLength > 0) pending.frames.push(answer.frames);
        if (!answer.last) continue;
        this.#pending.delete(answer.id);
        if (answer.code === GrpcStatus.OK) pending.resolve(pending.frames);
        else
          pending.reject(
            clientError(rpcErrorOfStatus({ code: answer.code, details: answer.message, metadata: new Metadata() })),
          );
      }
    } catch (err) {
      failure = err;
    }
    if (this.#call === call) this.#call = undefined;
    const notServed = !this.#answered && isUnimplemented(failure);
    if (notServed) this.#notServed = true;
    for (const [id] of this.#pending) {
      if (notServed) {
        const pending = this.#pending.get(id);
        this.#pending.delete(id);
        pending?.resolve(NOT_SERVED);
      } else
        this.#settle(
          id,
          failure ?? new HarnessHostError(ErrorCode.Unavailable, "the turn stream ended before the turn was answered"),
        );
    }
  }

  #settle(id: bigint, err: unknown): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    pending.reject(clientError(err));
  }
}

function isUnimplemented(err: unknown): boolean {
  return err !== undefined && clientError(err).code === ErrorCode.Unimplemented;
}
