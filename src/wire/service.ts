// protobuf-es service descriptors as grpc-js service definitions. Invariant: every method's path is
// `/<package.Service>/<Method>` and its bytes are exactly protobuf-es binary of the declared messages,
// so any gRPC peer built from the same .proto interoperates.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { DescMessage, DescMethod, DescService, Message, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";
import { countMessages } from "./message-count.js";

export type MethodShape = GenServiceMethods[string];
export type MethodKind = DescMethod["methodKind"];

/** The request message a method receives. */
export type RequestOf<M extends MethodShape> = MessageShape<M["input"]>;
/** What a caller may pass as a request: a message or its init shape. */
export type RequestInit<M extends MethodShape> = MessageInitShape<M["input"]>;
export type ResponseOf<M extends MethodShape> = MessageShape<M["output"]>;
export type ResponseInit<M extends MethodShape> = MessageInitShape<M["output"]>;

export function isRequestStream(kind: MethodKind): boolean {
  return kind === "client_streaming" || kind === "bidi_streaming";
}

export function isResponseStream(kind: MethodKind): boolean {
  return kind === "server_streaming" || kind === "bidi_streaming";
}

export function methodPath(method: DescMethod): string {
  return `/${method.parent.typeName}/${method.name}`;
}

/**
 * A response already encoded by its handler (a packed Exec message, docs/protocol.md §20): written as
 * these bytes, which the handler vouches are the encodings of `messages` back to back — a valid
 * encoding of the method's response message. A transport that encodes its own messages (Connect)
 * sends `messages` one by one instead.
 */
export class EncodedResponse {
  constructor(
    readonly bytes: Buffer,
    readonly messages: readonly unknown[],
  ) {}
}

/**
 * Serializes a message or an init shape of `schema` (init shapes are completed with `create`); an
 * EncodedResponse is its bytes.
 */
export function encodeMessage(schema: DescMessage, value: unknown): Buffer {
  if (value instanceof EncodedResponse) return value.bytes;
  const msg = create(schema, value as MessageInitShape<DescMessage>);
  const bytes = toBinary(schema, msg);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function decodeMessage(schema: DescMessage, bytes: Buffer): Message {
  return fromBinary(schema, bytes);
}

/**
 * A request whose bytes are not a valid encoding of its message. grpc-js answers a throwing request
 * deserializer with INTERNAL; decoding to this marker instead lets the handler refuse the call with
 * INVALID_ARGUMENT (a client mistake, not a server fault) before any service code runs.
 */
export class UndecodableRequest {
  constructor(
    readonly typeName: string,
    readonly reason: string,
  ) {}
}

/**
 * A bound on the protobuf messages one request may decode into, checked on its bytes before decoding
 * (message-count.ts): a request of a few MiB can otherwise hold a million empty messages, each a
 * decoded object of hundreds of bytes. `refuse` makes the error a refused request answers with.
 */
export interface DecodeBound {
  readonly maxMessages: number;
  refuse(count: number, typeName: string): Error;
}

/** A request refused before decoding (DecodeBound); the handler answers with `error`. */
export class RefusedRequest {
  constructor(readonly error: Error) {}
}

function decodeRequest(schema: DescMessage, bytes: Buffer, bound?: DecodeBound): Message {
  if (bound !== undefined) {
    const count = countMessages(schema, bytes, bound.maxMessages);
    if (count > bound.maxMessages)
      return new RefusedRequest(bound.refuse(count, schema.typeName)) as unknown as Message;
  }
  try {
    return fromBinary(schema, bytes);
  } catch (err) {
    return new UndecodableRequest(
      schema.typeName,
      err instanceof Error ? err.message : String(err),
    ) as unknown as Message;
  }
}

export function methodDefinition(method: DescMethod, bound?: DecodeBound): MethodDefinition<Message, Message> {
  return {
    path: methodPath(method),
    requestStream: isRequestStream(method.methodKind),
    responseStream: isResponseStream(method.methodKind),
    requestSerialize: (value: unknown) => encodeMessage(method.input, value),
    requestDeserialize: (bytes: Buffer) => decodeRequest(method.input, bytes, bound),
    responseSerialize: (value: unknown) => encodeMessage(method.output, value),
    responseDeserialize: (bytes: Buffer) => decodeMessage(method.output, bytes),
    originalName: method.localName,
  };
}

/** The grpc-js definition of a protobuf-es service, keyed by each method's localName. */
export function serviceDefinition(service: DescService, bound?: DecodeBound): ServiceDefinition {
  const def: Record<string, MethodDefinition<Message, Message>> = {};
  for (const method of service.methods) def[method.localName] = methodDefinition(method, bound);
  return def as ServiceDefinition;
}

/** The method table of a generated service: `ServiceImpl<MethodsOf<typeof Actors>>`. */
export type MethodsOf<T> = T extends GenService<infer S> ? S : never;
