// Typed grpc-js server handlers over protobuf-es services. Invariant: every RPC ends with exactly one
// status (a HostError's mapped status, INTERNAL for anything else, OK otherwise), a streaming response
// has at most one message in flight to its client (the next is written once the previous one left for
// the socket, so a client that stops reading holds one message of host memory, not a buffer of them),
// and a handler's AbortSignal fires when the client cancels or its deadline passes.
import { contextFromHeaders, SpanKind, traced, tracingEnabled } from "../obs/trace.js";
import { lstatSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { Metadata, ServerCredentials } from "@grpc/grpc-js";
import type {
  Server,
  ServerDuplexStream,
  ServerReadableStream,
  ServerUnaryCall,
  ServerWritableStream,
  UntypedHandleCall,
  UntypedServiceImplementation,
  sendUnaryData,
} from "@grpc/grpc-js";
import type { DescMethod, Message } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import type { Readable, Writable } from "node:stream";
import { ErrorCode, HostError } from "../errors/index.js";
import { parseAddress, withPort } from "./address.js";
import { AsyncQueue } from "./queue.js";
import {
  type DecodeBound,
  type EncodedResponse,
  RefusedRequest,
  UndecodableRequest,
  methodPath,
  serviceDefinition,
} from "./service.js";
import type { MethodShape, RequestOf, ResponseInit } from "./service.js";
import { statusOfError } from "./status.js";

/** What a handler knows about its call. */
export interface CallContext {
  /** The client's request metadata. */
  readonly metadata: Metadata;
  /** Fires when the client cancels or the call's deadline passes. */
  readonly signal: AbortSignal;
  readonly peer: string;
  /** Sends response headers now (at most once, before the first response). */
  sendHeader(metadata: Metadata): void;
  /**
   * Response headers sent with the first response or the status, whichever goes first (at most once,
   * like sendHeader): one HTTP/2 write instead of a HEADERS frame of its own.
   */
  deferHeader(metadata: Metadata): void;
  /** Trailing metadata sent with the final status (OK or error). */
  readonly trailers: Metadata;
}

export type ServerHandler<M extends MethodShape> = M["methodKind"] extends "unary"
  ? (request: RequestOf<M>, ctx: CallContext) => Promise<ResponseInit<M>> | ResponseInit<M>
  : M["methodKind"] extends "server_streaming"
    ? (request: RequestOf<M>, ctx: CallContext) => AsyncIterable<ResponseInit<M> | EncodedResponse>
    : M["methodKind"] extends "client_streaming"
      ? (requests: AsyncIterable<RequestOf<M>>, ctx: CallContext) => Promise<ResponseInit<M>>
      : M["methodKind"] extends "bidi_streaming"
        ? (requests: AsyncIterable<RequestOf<M>>, ctx: CallContext) => AsyncIterable<ResponseInit<M>>
        : never;

/** One handler per method of the service, keyed by the method's localName. */
export type ServiceImpl<S extends GenServiceMethods> = { readonly [K in keyof S]: ServerHandler<S[K]> };

type UnaryFn = (request: Message, ctx: CallContext) => unknown;
type ServerStreamFn = (request: Message, ctx: CallContext) => AsyncIterable<unknown>;
type ClientStreamFn = (requests: AsyncIterable<Message>, ctx: CallContext) => Promise<unknown>;
type BidiFn = (requests: AsyncIterable<Message>, ctx: CallContext) => AsyncIterable<unknown>;

export function addService<S extends GenServiceMethods>(
  server: Server,
  service: GenService<S>,
  impl: ServiceImpl<S>,
  bound?: DecodeBound,
): void {
  const handlers: UntypedServiceImplementation = {};
  const table = impl as unknown as Record<string, unknown>;
  for (const method of service.methods) {
    const fn = table[method.localName];
    if (typeof fn !== "function") {
      throw new HostError(ErrorCode.Internal, `no handler for ${methodPath(method)}`);
    }
    handlers[method.localName] = grpcHandler(method, fn.bind(impl) as (...a: never[]) => unknown);
  }
  server.addService(serviceDefinition(service, bound), handlers);
}

/**
 * A unix socket file nobody listens on (left by a crashed process) is removed so the path can be
 * bound again; a socket someone does listen on is left alone (the bind then fails loudly).
 */
async function reclaimStaleSocket(path: string): Promise<void> {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(path);
  } catch {
    return;
  }
  if (!stat.isSocket()) return;
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
  if (!live) rmSync(path, { force: true });
}

/** Binds `addr` (see parseAddress) and resolves to the dialable address (port 0 resolved). */
export async function listen(server: Server, addr: string, credentials?: ServerCredentials): Promise<string> {
  const parsed = parseAddress(addr);
  if (parsed.kind === "unix") await reclaimStaleSocket(parsed.path);
  return new Promise((resolve, reject) => {
    server.bindAsync(parsed.target, credentials ?? ServerCredentials.createInsecure(), (err, port) => {
      if (err !== null) {
        reject(new HostError(ErrorCode.Unavailable, `cannot listen on ${addr}: ${err.message}`, { cause: err }));
        return;
      }
      resolve(withPort(parsed, port).target);
    });
  });
}

function grpcHandler(method: DescMethod, fn: (...a: never[]) => unknown): UntypedHandleCall {
  switch (method.methodKind) {
    case "unary":
      return unaryHandler(method, fn as unknown as UnaryFn);
    case "server_streaming":
      return serverStreamHandler(method, fn as unknown as ServerStreamFn);
    case "client_streaming":
      return clientStreamHandler(method, fn as unknown as ClientStreamFn);
    case "bidi_streaming":
      return bidiHandler(method, fn as unknown as BidiFn);
    default: {
      const exhaustive: never = method.methodKind;
      throw new Error(`unknown method kind ${String(exhaustive)}`);
    }
  }
}

/** The request as decoded, INVALID_ARGUMENT when its bytes were not a valid message, or its refusal. */
function decoded<T>(request: T): T {
  if (request instanceof RefusedRequest) throw request.error;
  if (request instanceof UndecodableRequest) {
    throw new HostError(
      ErrorCode.InvalidArgument,
      `request is not a valid ${request.typeName} message: ${request.reason}`,
    );
  }
  return request;
}

function unaryHandler(method: DescMethod, fn: UnaryFn): UntypedHandleCall {
  return (call: ServerUnaryCall<Message, unknown>, callback: sendUnaryData<unknown>) => {
    const [ctx, end] = callContext(call);
    answerOnce(() => inRpcSpan(method, ctx, async () => fn(decoded(call.request), ctx)), ctx, end, callback);
  };
}

function serverStreamHandler(method: DescMethod, fn: ServerStreamFn): UntypedHandleCall {
  return (call: ServerWritableStream<Message, unknown>) => {
    const [ctx, end] = callContext(call);
    void inRpcSpan(method, ctx, () => writeAll(call, ctx, end, () => fn(decoded(call.request), ctx)));
  };
}

function clientStreamHandler(method: DescMethod, fn: ClientStreamFn): UntypedHandleCall {
  return (call: ServerReadableStream<Message, unknown>, callback: sendUnaryData<unknown>) => {
    const [ctx, end] = callContext(call);
    const requests = readStream<Message>(call, () => cancelledError(call));
    answerOnce(() => inRpcSpan(method, ctx, async () => fn(requests, ctx)), ctx, end, callback);
  };
}

function bidiHandler(method: DescMethod, fn: BidiFn): UntypedHandleCall {
  return (call: ServerDuplexStream<Message, unknown>) => {
    const [ctx, end] = callContext(call);
    const requests = readStream<Message>(call, () => cancelledError(call));
    void inRpcSpan(method, ctx, () => writeAll(call, ctx, end, () => fn(requests, ctx)));
  };
}

/**
 * Runs a call's handler in a SERVER span named after the method, continuing the caller's W3C trace
 * context (`traceparent` metadata) — only while tracing is on; otherwise it just runs it.
 */
function inRpcSpan<T>(method: DescMethod, ctx: CallContext, run: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return run();
  const header = (key: string): string | undefined => {
    const v = ctx.metadata.get(key)[0];
    return typeof v === "string" ? v : undefined;
  };
  return traced(
    `${method.parent.typeName}/${method.name}`,
    () => ({
      "rpc.system": "grpc",
      "rpc.service": method.parent.typeName,
      "rpc.method": method.name,
      ...(header("x-request-id") !== undefined ? { "harnesshost.request_id": header("x-request-id") } : {}),
    }),
    run,
    contextFromHeaders(header),
    SpanKind.SERVER,
  );
}

/** Runs a single-response handler and sends its result or error as the call's status. */
function answerOnce(handler: () => unknown, ctx: CallContext, end: CallEnd, callback: sendUnaryData<unknown>): void {
  // Through an async function, so a handler that throws synchronously is answered like a rejection.
  void (async () => handler())().then(
    (res) => {
      end.finished();
      callback(null, res, ctx.trailers);
    },
    (err: unknown) => {
      end.finished();
      callback(statusOfError(err, ctx.trailers));
    },
  );
}

type StreamingCall = Writable & { end(metadata?: Metadata): unknown };

/** Drains the handler's responses into the call with backpressure, then ends it with a status. */
async function writeAll(
  call: StreamingCall,
  ctx: CallContext,
  end: CallEnd,
  responses: () => AsyncIterable<unknown>,
): Promise<void> {
  try {
    for await (const res of responses()) {
      if (ctx.signal.aborted) return;
      end.flushHeader();
      await writeFlushed(call, res);
    }
    if (ctx.signal.aborted) return;
    end.finished();
    call.end(ctx.trailers);
  } catch (err) {
    if (ctx.signal.aborted) return;
    end.finished();
    // grpc-js turns an 'error' event on a server stream into the call's status.
    call.emit("error", statusOfError(err, ctx.trailers));
  }
}

/**
 * Writes one message and resolves once it has been handed on (its write callback ran): the server's
 * streams never buffer more than the message in flight.
 */
function writeFlushed(stream: Writable, value: unknown): Promise<void> {
  if (stream.destroyed) return Promise.reject(new HostError(ErrorCode.Cancelled, "stream closed"));
  return new Promise((resolve, reject) => {
    const onClose = (): void => reject(new HostError(ErrorCode.Cancelled, "stream closed"));
    stream.once("close", onClose);
    stream.write(value, (err) => {
      stream.off("close", onClose);
      if (err) reject(new HostError(ErrorCode.Cancelled, "stream closed", { cause: err }));
      else resolve();
    });
  });
}

const HIGH_WATER = 16;
const LOW_WATER = 4;

/**
 * The messages of a readable stream as an async iterable, pausing the source while the consumer is
 * behind. A 'close' without 'end' (the call was cancelled) fails the iteration with `onClose()`.
 */
export function readStream<T>(stream: Readable, onClose: () => unknown): AsyncQueue<T> {
  const queue = new AsyncQueue<T>();
  let ended = false;
  stream.on("data", (msg: T) => {
    try {
      decoded(msg);
    } catch (err) {
      queue.fail(err);
      return;
    }
    queue.offer(msg);
    if (queue.size >= HIGH_WATER) stream.pause();
  });
  queue.onTake = (remaining) => {
    if (remaining <= LOW_WATER && stream.isPaused()) stream.resume();
  };
  queue.onDiscard = () => {
    if (stream.isPaused()) stream.resume();
  };
  stream.on("end", () => {
    ended = true;
    queue.end();
  });
  stream.on("error", (err: unknown) => queue.fail(err));
  stream.on("close", () => {
    if (!ended && !queue.closed) queue.fail(onClose());
  });
  return queue;
}

interface AnyServerCall {
  readonly metadata: Metadata;
  getPeer(): string;
  getDeadline(): Date | number;
  sendMetadata(metadata: Metadata): void;
  on(event: "cancelled", listener: () => void): unknown;
}

/** What the adapter does around a call's responses: headers deferred to them, and its status. */
interface CallEnd {
  /** Sends a deferred header now, if one waits (before a response is written). */
  flushHeader(): void;
  /** Says the status is being sent (after any deferred header): a close from here on aborts nothing. */
  finished(): void;
}

/**
 * The handler's view of a call, and `finished()` to say its status has been sent. grpc-js emits
 * 'cancelled' whenever the HTTP/2 stream closes — after a normal status too — so only a close before
 * `finished()` aborts the handler's signal (and builds the CANCELLED error). A deferred header goes out
 * just before the first response or the status.
 */
function callContext(call: AnyServerCall): [CallContext, CallEnd] {
  const controller = new AbortController();
  let done = false;
  call.on("cancelled", () => {
    if (!done) controller.abort(cancelledError(call));
  });
  let headerSent = false;
  let deferred: Metadata | undefined;
  const flushHeader = (): void => {
    if (deferred === undefined) return;
    const metadata = deferred;
    deferred = undefined;
    call.sendMetadata(metadata);
  };
  return [
    {
      metadata: call.metadata,
      signal: controller.signal,
      peer: call.getPeer(),
      trailers: new Metadata(),
      sendHeader(metadata: Metadata) {
        if (headerSent) return;
        headerSent = true;
        call.sendMetadata(metadata);
      },
      deferHeader(metadata: Metadata) {
        if (headerSent) return;
        headerSent = true;
        deferred = metadata;
      },
    },
    {
      flushHeader,
      finished() {
        flushHeader();
        done = true;
      },
    },
  ];
}

/**
 * How close to its deadline a client's cancel may arrive and still be the deadline firing. The client
 * starts its clock when it sends; ours starts when the headers are read, later by the request's transit
 * and queueing time, so the client's RST_STREAM can arrive before our own deadline timer on a busy host.
 * Unit: milliseconds. Cost of the slack: a deliberate cancel this close to the deadline is reported as
 * DEADLINE_EXCEEDED, which is what it would have become a moment later anyway.
 */
const DEADLINE_CANCEL_SLACK_MS = 1000;

function cancelledError(call: Pick<AnyServerCall, "getDeadline">): HostError {
  const deadline = call.getDeadline();
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  if (Number.isFinite(ms) && ms <= Date.now() + DEADLINE_CANCEL_SLACK_MS) {
    return new HostError(ErrorCode.DeadlineExceeded, "call deadline exceeded");
  }
  return new HostError(ErrorCode.Cancelled, "call cancelled by the client");
}
