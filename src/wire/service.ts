// protobuf-es service descriptors as grpc-js service definitions. Invariant: every method's path is
// `/<package.Service>/<Method>` and its bytes are exactly protobuf-es binary of the declared messages,
// so any gRPC peer built from the same .proto interoperates.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { DescMessage, DescMethod, DescService, Message, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";

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

/** Serializes a message or an init shape of `schema` (init shapes are completed with `create`). */
export function encodeMessage(schema: DescMessage, value: unknown): Buffer {
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

function decodeRequest(schema: DescMessage, bytes: Buffer): Message {
  try {
    return fromBinary(schema, bytes);
  } catch (err) {
    return new UndecodableRequest(
      schema.typeName,
      err instanceof Error ? err.message : String(err),
    ) as unknown as Message;
  }
}

export function methodDefinition(method: DescMethod): MethodDefinition<Message, Message> {
  return {
    path: methodPath(method),
    requestStream: isRequestStream(method.methodKind),
    responseStream: isResponseStream(method.methodKind),
    requestSerialize: (value: unknown) => encodeMessage(method.input, value),
    requestDeserialize: (bytes: Buffer) => decodeRequest(method.input, bytes),
    responseSerialize: (value: unknown) => encodeMessage(method.output, value),
    responseDeserialize: (bytes: Buffer) => decodeMessage(method.output, bytes),
    originalName: method.localName,
  };
}

/** The grpc-js definition of a protobuf-es service, keyed by each method's localName. */
export function serviceDefinition(service: DescService): ServiceDefinition {
  const def: Record<string, MethodDefinition<Message, Message>> = {};
  for (const method of service.methods) def[method.localName] = methodDefinition(method);
  return def as ServiceDefinition;
}

/** The method table of a generated service: `ServiceImpl<MethodsOf<typeof Actors>>`. */
export type MethodsOf<T> = T extends GenService<infer S> ? S : never;
