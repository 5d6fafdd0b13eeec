// Request bodies on the HTTP listener, checked before connect-node sees them (it decodes inside itself
// with no hook before decoding). Invariants, for a method that takes one request message (every method
// the listener serves): the body carries exactly one message, so a body of several envelopes is
// refused as soon as the bytes after the first envelope arrive, before any envelope is decompressed
// (connect-node would decompress and decode the second before refusing it); the one message may take
// at most requestBytes, encoded and after decompression (an envelope that declares more, a whole body
// longer, or a compressed payload that expands past it is refused RESOURCE_EXHAUSTED naming
// requestBytes, decompressing no further than that); and, for the services given the requestMessages
// bound (wire/service.ts DecodeBound), the message is counted before anything is decoded: binary proto
// with the gRPC listener's counter (wire/message-count.ts), JSON by its JSON values (every `{`, `[`,
// `:` and `,` outside strings, plus one, an upper bound on the messages it decodes into). A refused
// body fails with the refusal's error, so the call is answered in its own protocol and nothing is
// decoded. What cannot be framed or decompressed (truncated, corrupt, unknown encoding) is passed on
// unchanged for connect-node to refuse.
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { overLimit } from "../limits/index.js";
import { countMessages } from "../wire/message-count.js";
import type { DecodeBound } from "../wire/index.js";
import { connectErrorOf } from "./connect-service.js";

/** How a request body of this content type carries its message, or undefined when not checked. */
interface Framing {
  readonly json: boolean;
  /** The whole body is the message (Connect unary), or it is enveloped (Connect streaming, gRPC-Web). */
  readonly enveloped: boolean;
  readonly encoding: string | undefined;
}

function framingOf(headers: Headers): Framing | undefined {
  const type = (headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type === "application/proto" || type === "application/json") {
    return {
      json: type === "application/json",
      enveloped: false,
      encoding: headers.get("content-encoding") ?? undefined,
    };
  }
  const envelope = /^application\/(connect|grpc-web|grpc)(\+(proto|json))?$/.exec(type);
  if (envelope === null || (envelope[1] === "connect" && envelope[3] === undefined)) return undefined;
  const header = envelope[1] === "connect" ? "connect-content-encoding" : "grpc-encoding";
  return { json: envelope[3] === "json", enveloped: true, encoding: headers.get(header) ?? undefined };
}

/** What one request body is checked against. */
export interface BodyBound {
  /** The method called: its request type is what is counted, and its kind says how many messages it takes. */
  readonly method: DescMethod;
  /** Limit requestBytes: the most one request message may take, encoded and after decompression. */
  readonly requestBytes: number;
  /** Limit requestMessages, for the services it applies to. */
  readonly messages?: DecodeBound;
}

const ENVELOPE_HEADER = 5;
/**
 * A refused body is still read (and dropped) to its end, up to this many times requestBytes in all,
 * so the answer reaches the client on a connection it can reuse; past that, reading stops and the
 * connection is closed under the answer (connect-node destroys a request it stops reading).
 */
const DRAIN_FACTOR = 2;

class Refusal {
  constructor(readonly error: Error) {}
}

/** The message's bytes, decompressed; a Refusal past requestBytes; undefined when it cannot be decompressed. */
function decompress(
  bytes: Uint8Array,
  encoding: string | undefined,
  bound: BodyBound,
): Uint8Array | Refusal | undefined {
  if (encoding === undefined || encoding === "identity") return bytes;
  const maxOutputLength = bound.requestBytes;
  try {
    if (encoding === "gzip") return gunzipSync(bytes, { maxOutputLength });
    if (encoding === "br") return brotliDecompressSync(bytes, { maxOutputLength });
    return undefined;
  } catch (err) {
    if (err instanceof RangeError || (err as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE") {
      return new Refusal(tooLarge(bound, undefined, `${encoding}-compressed, once decompressed`));
    }
    return undefined;
  }
}

function tooLarge(bound: BodyBound, actual: number | undefined, how: string): Error {
  return overLimit("requestBytes", bound.requestBytes, actual, `${bound.method.input.typeName} (${how})`);
}

/**
 * The refusal the body's first `total` bytes already earn, if any (`head`: its first bytes, at least
 * the envelope header once that many arrived): past requestBytes, or a second envelope begun.
 */
function judgePrefix(total: number, head: Uint8Array, framing: Framing, bound: BodyBound): Refusal | undefined {
  if (!framing.enveloped) {
    return total > bound.requestBytes ? new Refusal(tooLarge(bound, undefined, "body")) : undefined;
  }
  if (head.byteLength < ENVELOPE_HEADER) return undefined;
  const len = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(1);
  if (len > bound.requestBytes) return new Refusal(tooLarge(bound, len, "envelope"));
  if (total <= ENVELOPE_HEADER + len) return undefined;
  const method = `${bound.method.parent.name}.${bound.method.name}`;
  return new Refusal(
    new ConnectError(
      `a ${method} request carries one message; this body holds more than one message (refused before any is decompressed)`,
      Code.Unimplemented,
    ),
  );
}

/** The one message's payload of a whole body, still compressed as sent; undefined when it cannot be framed. */
function payloadOf(body: Uint8Array, framing: Framing): { bytes: Uint8Array; compressed: boolean } | undefined {
  // A whole body is compressed (or not) as its content-encoding says.
  if (!framing.enveloped) return { bytes: body, compressed: true };
  if (body.byteLength < ENVELOPE_HEADER) return undefined;
  const flags = body[0] ?? 0;
  const len = new DataView(body.buffer, body.byteOffset, body.byteLength).getUint32(1);
  if ((flags & 0x80) !== 0 || body.byteLength !== ENVELOPE_HEADER + len) return undefined;
  return { bytes: body.subarray(ENVELOPE_HEADER), compressed: (flags & 1) === 1 };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const STRUCTURAL = new Set([0x7b, 0x5b, 0x3a, 0x2c]); // { [ : ,

/** JSON values in `bytes` (an upper bound on the protobuf messages it decodes into), stopping past `max`. */
export function countJsonValues(bytes: Uint8Array, max: number): number {
  let count = 1;
  let inString = false;
  for (let i = 0; i < bytes.length && count <= max; i++) {
    const b = bytes[i] ?? 0;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (STRUCTURAL.has(b)) count++;
  }
  return count;
}

/** The refusal of a whole body, if any: decompressed past requestBytes, or more messages than allowed. */
function judgeWhole(body: Uint8Array, framing: Framing, bound: BodyBound): Refusal | undefined {
  const payload = payloadOf(body, framing);
  if (payload === undefined) return undefined;
  const bytes = payload.compressed ? decompress(payload.bytes, framing.encoding, bound) : payload.bytes;
  if (bytes === undefined || bytes instanceof Refusal) return bytes;
  const messages = bound.messages;
  if (messages === undefined) return undefined;
  const input = bound.method.input;
  const count = framing.json
    ? countJsonValues(bytes, messages.maxMessages)
    : countMessages(input, bytes, messages.maxMessages);
  return count > messages.maxMessages ? new Refusal(messages.refuse(count, input.typeName)) : undefined;
}

/**
 * `body` as connect-node should read it: the same bytes, or, when the checks above refuse them, an
 * iterable that fails with the refusal's error, having looked no further than needed to decide (the
 * rest is drained, DRAIN_FACTOR).
 */
export async function* boundedBody(
  body: AsyncIterable<Uint8Array>,
  headers: Headers,
  bound: BodyBound,
): AsyncGenerator<Uint8Array> {
  const framing = framingOf(headers);
  const kind = bound.method.methodKind;
  if (framing === undefined || kind === "client_streaming" || kind === "bidi_streaming") {
    yield* body;
    return;
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  let head: Uint8Array = new Uint8Array(0);
  let refusal: Refusal | undefined;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (refusal !== undefined) {
      // Drained, not held: read to its end, the connection stays usable for the client's next call.
      if (total > bound.requestBytes * DRAIN_FACTOR) break;
      continue;
    }
    chunks.push(chunk);
    if (head.byteLength < ENVELOPE_HEADER) head = Buffer.concat(chunks);
    refusal = judgePrefix(total, head, framing, bound);
    if (refusal !== undefined) chunks.length = 0;
  }
  refusal ??= judgeWhole(chunks.length === 1 ? (chunks[0] ?? head) : Buffer.concat(chunks), framing, bound);
  if (refusal !== undefined) throw connectErrorOf(refusal.error);
  yield* chunks;
}
