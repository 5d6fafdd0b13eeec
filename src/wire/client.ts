// Typed grpc-js client calls over protobuf-es services. Invariant: every failure a caller sees is a
// HostError — an RpcError carrying the gRPC status for server/transport failures, or the caller's own
// abort reason — and a call whose caller stops listening is cancelled, never leaked.
import { Client, Metadata, status as Status, credentials as grpcCredentials } from "@grpc/grpc-js";
import type {
  CallOptions as GrpcCallOptions,
  ChannelInterface as Channel,
  ChannelCredentials,
  ChannelOptions,
  ClientDuplexStream,
  ClientReadableStream,
  StatusObject,
} from "@grpc/grpc-js";
import { fromBinary, type DescMethod, type Message } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import { ErrorCode, HostError } from "../errors/index.js";
import { parseAddress } from "./address.js";
import { AsyncQueue } from "./queue.js";
import { decodeMessage, encodeMessage, methodPath } from "./service.js";
import type { MethodShape, RequestInit, ResponseOf } from "./service.js";
import { writeWithBackpressure } from "./backpressure.js";
import { abortError, rpcErrorOfStatus } from "./status.js";

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** Absolute deadline. */
  readonly deadline?: Date | number;
  /** Relative deadline; ignored when `deadline` is set. */
  readonly timeoutMs?: number;
  readonly metadata?: Metadata | Readonly<Record<string, string>>;
  /** Response headers, when they arrive. */
  readonly onHeader?: (metadata: Metadata) => void;
  /** Trailing metadata, with the final status. */
  readonly onTrailer?: (metadata: Metadata) => void;
  /** The encoded size of each response message, as it arrives (before it is decoded). */
  readonly onResponseBytes?: (bytes: number) => void;
  /**
   * A streaming response message's frames when it packs several (docs/protocol.md §20), else
   * undefined; each frame is decoded and delivered as a response of its own, in order.
   */
  readonly unpackResponse?: (bytes: Buffer) => readonly Uint8Array[] | undefined;
}

export interface BidiCall<Req, Res> extends AsyncIterable<Res> {
  /** Sends one request; resolves once grpc-js accepted it (waits for 'drain' when its buffer is full). */
  send(request: Req): Promise<void>;
  /** Half-closes: no more requests. */
  end(): void;
  /** Cancels the call; iteration then fails with the caller-cancelled error. */
  cancel(): void;
}

export type ClientMethod<M extends MethodShape> = M["methodKind"] extends "unary"
  ? (request: RequestInit<M>, options?: CallOptions) => Promise<ResponseOf<M>>
  : M["methodKind"] extends "server_streaming"
    ? (request: RequestInit<M>, options?: CallOptions) => AsyncIterable<ResponseOf<M>>
    : M["methodKind"] extends "client_streaming"
      ? (requests: AsyncIterable<RequestInit<M>>, options?: CallOptions) => Promise<ResponseOf<M>>
      : M["methodKind"] extends "bidi_streaming"
        ? (options?: CallOptions) => BidiCall<RequestInit<M>, ResponseOf<M>>
        : never;

export type ServiceClient<S extends GenServiceMethods> = { readonly [K in keyof S]: ClientMethod<S[K]> } & {
  /** Closes the underlying connection when this client created it. */
  close(): void;
};

export interface DialOptions {
  readonly credentials?: ChannelCredentials;
  readonly channelOptions?: ChannelOptions;
  /** Metadata attached to every call (per-call metadata adds to it). */
  readonly metadata?: Readonly<Record<string, string>>;
}

/** Opens a connection usable by several typed clients (pass it as `channelOrAddress`). */
export function dial(address: string, options: DialOptions = {}): Client {
  const target = parseAddress(address).target;
  // No channelz bookkeeping per call and message unless the caller asks for it: nothing here reads it.
  const channelOptions = { "grpc.enable_channelz": 0, ...options.channelOptions };
  return new Client(target, options.credentials ?? grpcCredentials.createInsecure(), channelOptions);
}

export function createClient<S extends GenServiceMethods>(
  service: GenService<S>,
  channelOrAddress: string | Client,
  options: DialOptions = {},
): ServiceClient<S> {
  const owned = typeof channelOrAddress === "string";
  const client = owned ? dial(channelOrAddress, options) : channelOrAddress;
  const methods: Record<string, unknown> = {};
  for (const method of service.methods) {
    methods[method.localName] = clientMethod(client, method, options.metadata ?? {});
  }
  methods["close"] = () => {
    if (owned) client.close();
  };
  return methods as ServiceClient<S>;
}

function clientMethod(client: Client, method: DescMethod, base: Readonly<Record<string, string>>): unknown {
  switch (method.methodKind) {
    case "unary":
      return (request: unknown, options: CallOptions = {}) => unaryCall(client, method, base, request, options);
    case "server_streaming":
      return (request: unknown, options: CallOptions = {}) => serverStreamCall(client, method, base, request, options);
    case "client_streaming":
      return (requests: AsyncIterable<unknown>, options: CallOptions = {}) =>
        clientStreamCall(client, method, base, requests, options);
    case "bidi_streaming":
      return (options: CallOptions = {}) => bidiCall(client, method, base, options);
    default: {
      const exhaustive: never = method.methodKind;
      throw new Error(`unknown method kind ${String(exhaustive)}`);
    }
  }
}

interface CallSetup {
  readonly path: string;
  readonly serialize: (value: unknown) => Buffer;
  readonly deserialize: (bytes: Buffer) => Message;
  readonly metadata: Metadata;
  readonly grpcOptions: GrpcCallOptions;
}

function setup(method: DescMethod, base: Readonly<Record<string, string>>, options: CallOptions): CallSetup {
  const metadata = new Metadata();
  for (const [k, v] of Object.entries(base)) metadata.set(k, v);
  if (options.metadata instanceof Metadata) metadata.merge(options.metadata);
  else if (options.metadata !== undefined) {
    for (const [k, v] of Object.entries(options.metadata)) metadata.set(k, v);
  }
  const grpcOptions: GrpcCallOptions = {};
  if (options.deadline !== undefined) grpcOptions.deadline = options.deadline;
  else if (options.timeoutMs !== undefined) grpcOptions.deadline = Date.now() + options.timeoutMs;
  return {
    path: methodPath(method),
    serialize: (value) => encodeMessage(method.input, value),
    deserialize: (bytes) => {
      options.onResponseBytes?.(bytes.length);
      const frames = options.unpackResponse?.(bytes);
      if (frames !== undefined)
        return new PackedResponse(frames.map((f) => fromBinary(method.output, f))) as unknown as Message;
      return decodeMessage(method.output, bytes);
    },
    metadata,
    grpcOptions,
  };
}

/** The frames of one packed response message, delivered one by one (readResponses). */
class PackedResponse {
  constructor(readonly frames: readonly Message[]) {}
}

interface Observable {
  on(event: "metadata", listener: (md: Metadata) => void): unknown;
  on(event: "status", listener: (st: StatusObject) => void): unknown;
  cancel(): void;
}

/** Wires header/trailer callbacks and the abort signal; returns a detach function. */
function observe(call: Observable, options: CallOptions): () => void {
  const { onHeader, onTrailer, signal } = options;
  if (onHeader !== undefined) call.on("metadata", onHeader);
  if (onTrailer !== undefined) call.on("status", (st) => onTrailer(st.metadata));
  if (signal === undefined) return () => undefined;
  const onAbort = (): void => call.cancel();
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

function failure(options: CallOptions, st: Pick<StatusObject, "code" | "details" | "metadata">): HostError {
  if (options.signal?.aborted === true) return abortError(options.signal);
  return rpcErrorOfStatus(st);
}

function unaryCall(
  client: Client,
  method: DescMethod,
  base: Readonly<Record<string, string>>,
  request: unknown,
  options: CallOptions,
): Promise<Message> {
  const s = setup(method, base, options);
  return new Promise((resolve, reject) => {
    let detach = (): void => undefined;
    const call = client.makeUnaryRequest<unknown, Message>(
      s.path,
      s.serialize,
      s.deserialize,
      request,
      s.metadata,
      s.grpcOptions,
      (err, res) => {
        detach();
        if (err !== null) reject(failure(options, err));
        else if (res === undefined) reject(new HostError(ErrorCode.Internal, `${s.path}: empty response`));
        else resolve(res);
      },
    );
    detach = observe(call, options);
  });
}

function serverStreamCall(
  client: Client,
  method: DescMethod,
  base: Readonly<Record<string, string>>,
  request: unknown,
  options: CallOptions,
): AsyncIterable<Message> {
  const s = setup(method, base, options);
  return {
    [Symbol.asyncIterator]: () => streamResponses(client.getChannel(), s, request, options),
  };
}

/**
 * A server-streaming call made on the channel's own call object, without grpc-js's Client surface (its
 * interceptor layers and a Readable per call, which nothing here uses): the request is sent and
 * half-closed at once, each response is read only while fewer than HIGH_WATER wait to be taken, and the
 * status ends the queue after every response that came before it (an OK status comes only once every
 * response was read). Failures to encode the request or decode a response end the call INTERNAL, as
 * grpc-js's Client ends it.
 */
function streamResponses(channel: Channel, s: CallSetup, request: unknown, options: CallOptions): AsyncQueue<Message> {
  const queue = new AsyncQueue<Message>();
  if (options.signal?.aborted === true) {
    // Nothing is opened for a caller that has already given up.
    queue.fail(abortError(options.signal));
    return queue;
  }
  const call = channel.createCall(
    s.path,
    s.grpcOptions.deadline ?? Number.POSITIVE_INFINITY,
    undefined,
    null,
    undefined,
  );
  const cancel = (): void => call.cancelWithStatus(Status.CANCELLED, "Cancelled on client");
  let detach = (): void => undefined;
  let reading = false;
  let settled = false;
  let readError: StatusObject | undefined;
  const read = (): void => {
    if (reading || settled) return;
    reading = true;
    call.startRead();
  };
  call.start(s.metadata, {
    onReceiveMetadata(metadata: Metadata) {
      options.onHeader?.(metadata);
    },
    onReceiveMessage(bytes: Buffer) {
      reading = false;
      let msg: Message;
      try {
        msg = s.deserialize(bytes);
      } catch (err) {
        readError = parsingError(err);
        call.cancelWithStatus(readError.code, readError.details);
        return;
      }
      if (msg instanceof PackedResponse) for (const frame of msg.frames) queue.offer(frame);
      else queue.offer(msg);
      if (queue.size < HIGH_WATER) read();
    },
    onReceiveStatus(received: StatusObject) {
      settled = true;
      detach();
      const st = readError ?? received;
      options.onTrailer?.(st.metadata);
      if (st.code === Status.OK) queue.end();
      else queue.fail(failure(options, st));
    },
  });
  // Listened for once the call has started (it had not aborted when the call was opened).
  detach = onAbort(options.signal, cancel);
  let bytes: Buffer | undefined;
  try {
    bytes = s.serialize(request);
  } catch (err) {
    call.cancelWithStatus(Status.INTERNAL, `Request message serialization failure: ${messageOf(err)}`);
  }
  if (bytes !== undefined) {
    call.sendMessageWithContext({}, bytes);
    call.halfClose();
  }
  read();
  queue.onTake = (remaining) => {
    if (remaining <= LOW_WATER) read();
  };
  queue.onDiscard = () => {
    detach();
    if (!settled) cancel();
  };
  return queue;
}

/** The status grpc-js's Client ends a call with when a response cannot be decoded. */
function parsingError(err: unknown): StatusObject {
  return {
    code: Status.INTERNAL,
    details: `Response message parsing error: ${messageOf(err)}`,
    metadata: new Metadata(),
  };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs `fn` once when `signal` aborts (at once if it already has); returns a function that stops that. */
function onAbort(signal: AbortSignal | undefined, fn: () => void): () => void {
  if (signal === undefined) return () => undefined;
  if (signal.aborted) {
    fn();
    return () => undefined;
  }
  signal.addEventListener("abort", fn, { once: true });
  return () => signal.removeEventListener("abort", fn);
}

async function clientStreamCall(
  client: Client,
  method: DescMethod,
  base: Readonly<Record<string, string>>,
  requests: AsyncIterable<unknown>,
  options: CallOptions,
): Promise<Message> {
  const s = setup(method, base, options);
  let settled = false;
  let detach = (): void => undefined;
  let call: ReturnType<Client["makeClientStreamRequest"]> | undefined;
  const result = new Promise<Message>((resolve, reject) => {
    call = client.makeClientStreamRequest<unknown, Message>(
      s.path,
      s.serialize,
      s.deserialize,
      s.metadata,
      s.grpcOptions,
      (err, res) => {
        settled = true;
        detach();
        if (err !== null) reject(failure(options, err));
        else if (res === undefined) reject(new HostError(ErrorCode.Internal, `${s.path}: empty response`));
        else resolve(res);
      },
    );
    detach = observe(call, options);
  });
  const writable = call;
  if (writable === undefined) throw new HostError(ErrorCode.Internal, "client stream was not created");
  try {
    for await (const req of requests) {
      if (settled) break;
      await writeWithBackpressure(writable, req);
    }
    if (!settled) writable.end();
  } catch (err) {
    if (!settled) {
      writable.cancel();
      result.catch(() => undefined);
      throw err;
    }
  }
  return result;
}

function bidiCall(
  client: Client,
  method: DescMethod,
  base: Readonly<Record<string, string>>,
  options: CallOptions,
): BidiCall<unknown, Message> {
  const s = setup(method, base, options);
  const call = client.makeBidiStreamRequest<unknown, Message>(
    s.path,
    s.serialize,
    s.deserialize,
    s.metadata,
    s.grpcOptions,
  );
  const responses = readResponses(call, options);
  return {
    send(request: unknown): Promise<void> {
      if (responses.closed) {
        return Promise.reject(new HostError(ErrorCode.Cancelled, `${s.path}: send on a finished call`));
      }
      return writeWithBackpressure(call, request);
    },
    end(): void {
      call.end();
    },
    cancel(): void {
      call.cancel();
    },
    [Symbol.asyncIterator]: () => responses,
  };
}

const HIGH_WATER = 16;
const LOW_WATER = 4;

/**
 * Responses of a streaming call as an async queue. The call's final status (not its 'error' event)
 * decides how iteration ends, after every message that arrived before it.
 */
function readResponses(
  call: ClientReadableStream<Message> | ClientDuplexStream<unknown, Message>,
  options: CallOptions,
): AsyncQueue<Message> {
  const queue = new AsyncQueue<Message>();
  const detach = observe(call, options);
  let status: StatusObject | undefined;
  let ended = false;
  const finish = (): void => {
    if (status === undefined) return;
    if (!ended && call.readableLength > 0) return;
    detach();
    if (status.code === 0) queue.end();
    else queue.fail(failure(options, status));
  };
  call.on("data", (msg: Message) => {
    if (msg instanceof PackedResponse) for (const frame of msg.frames) queue.offer(frame);
    else queue.offer(msg);
    if (queue.size >= HIGH_WATER) call.pause();
  });
  call.on("error", () => undefined); // the status event carries the same information
  call.on("status", (st: StatusObject) => {
    status = st;
    finish();
  });
  call.on("end", () => {
    ended = true;
    finish();
  });
  queue.onTake = (remaining) => {
    if (remaining <= LOW_WATER && call.isPaused()) call.resume();
  };
  queue.onDiscard = () => {
    detach();
    if (status === undefined) call.cancel();
  };
  return queue;
}
