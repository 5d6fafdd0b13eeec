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
// decoded. A compressed message is decompressed once, here: what passed is handed on decompressed, in
// a form connect-node decodes without decompressing (an envelope with its compressed flag cleared,
// its message-encoding header kept since a flag of 0 means uncompressed, so response compression is
// negotiated as before; a Connect unary body without its content-encoding, with content-length
// its decompressed length, and accept-encoding set to the request's encoding only when the client
// sent none, which is what connect-node answers such a client in). A compressed Connect unary body
// is therefore read whole before connect-node's handler runs (the header is read there first); any
// other is checked as connect-node reads it. What cannot be framed or decompressed (truncated,
// corrupt, unknown encoding) is passed on unchanged, headers and all, for connect-node to refuse.
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Compression } from "@connectrpc/connect/protocol";
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
/** An envelope's compressed flag. */
const COMPRESSED = 1;
/**
 * A refused body is still read (and dropped) to its end, up to this many times requestBytes in all,
 * so the answer reaches the client on a connection it can reuse; past that, reading stops and the
 * connection is closed under the answer (connect-node destroys a request it stops reading).
 */
const DRAIN_FACTOR = 2;

class Refusal {
  constructor(readonly error: Error) {}
}

/**
 * Decompressions of request messages on the HTTP listener, the host's (here) and connect-node's (its
 * gzip and br, through countingDecompressions): tests read it to see each compressed message
 * decompressed once.
 */
export const requestDecompressions = { count: 0 };

/** `compression` (connect-node's gzip or br), its decompressions counted in requestDecompressions. */
export function countingDecompressions(compression: Compression): Compression {
  return {
    name: compression.name,
    compress: (bytes) => compression.compress(bytes),
    decompress: (bytes, readMaxBytes) => {
      requestDecompressions.count++;
      return compression.decompress(bytes, readMaxBytes);
    },
  };
}

/** The message's bytes, decompressed; a Refusal past requestBytes; undefined when it cannot be decompressed. */
function decompress(
  bytes: Uint8Array,
  encoding: string | undefined,
  bound: BodyBound,
): Uint8Array | Refusal | undefined {
  if (encoding === undefined || encoding === "identity") return bytes;
  if (!isDecompressed(encoding)) return undefined;
  const maxOutputLength = bound.requestBytes;
  requestDecompressions.count++;
  try {
    if (encoding === "gzip") return gunzipSync(bytes, { maxOutputLength });
    return brotliDecompressSync(bytes, { maxOutputLength });
  } catch (err) {
    if (err instanceof RangeError || (err as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE") {
      return new Refusal(tooLarge(bound, undefined, `${encoding}-compressed, once decompressed`));
    }
    return undefined;
  }
}

/** The encodings decompressed here (connect-node's gzip and br); any other is passed on for connect-node. */
function isDecompressed(encoding: string | undefined): encoding is "gzip" | "br" {
  return encoding === "gzip" || encoding === "br";
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
function payloadOf(
  body: Uint8Array,
  framing: Framing,
): { bytes: Uint8Array; compressed: boolean; flags: number } | undefined {
  // A whole body is compressed (or not) as its content-encoding says.
  if (!framing.enveloped) return { bytes: body, compressed: true, flags: 0 };
  if (body.byteLength < ENVELOPE_HEADER) return undefined;
  const flags = body[0] ?? 0;
  const len = new DataView(body.buffer, body.byteOffset, body.byteLength).getUint32(1);
  if ((flags & 0x80) !== 0 || body.byteLength !== ENVELOPE_HEADER + len) return undefined;
  return { bytes: body.subarray(ENVELOPE_HEADER), compressed: (flags & COMPRESSED) === COMPRESSED, flags };
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

/** A message that passed, decompressed here; handed on as it is, never decompressed again. */
class Inflated {
  constructor(
    readonly message: Uint8Array,
    /** Its envelope's flags with the compressed flag cleared (enveloped bodies). */
    readonly flags: number,
  ) {}
}

/**
 * The refusal of a whole body, if any (decompressed past requestBytes, or more messages than
 * allowed); else its message when it was decompressed here; undefined: the body goes on as sent.
 */
function judgeWhole(body: Uint8Array, framing: Framing, bound: BodyBound): Refusal | Inflated | undefined {
  const payload = payloadOf(body, framing);
  if (payload === undefined) return undefined;
  const inflating = payload.compressed && isDecompressed(framing.encoding);
  const bytes = payload.compressed ? decompress(payload.bytes, framing.encoding, bound) : payload.bytes;
  if (bytes === undefined || bytes instanceof Refusal) return bytes;
  const passed = inflating ? new Inflated(bytes, payload.flags & ~COMPRESSED) : undefined;
  const messages = bound.messages;
  if (messages === undefined) return passed;
  const input = bound.method.input;
  const count = framing.json
    ? countJsonValues(bytes, messages.maxMessages)
    : countMessages(input, bytes, messages.maxMessages);
  return count > messages.maxMessages ? new Refusal(messages.refuse(count, input.typeName)) : passed;
}

/**
 * The whole body read and judged, looking no further than needed to decide: a Refusal (the rest
 * drained, DRAIN_FACTOR), the message Inflated, or the chunks as sent. A failure to read is thrown.
 */
async function readJudged(
  body: AsyncIterable<Uint8Array>,
  framing: Framing,
  bound: BodyBound,
): Promise<Refusal | Inflated | Uint8Array[]> {
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
  if (refusal !== undefined) return refusal;
  return judgeWhole(chunks.length === 1 ? (chunks[0] ?? head) : Buffer.concat(chunks), framing, bound) ?? chunks;
}

/** An enveloped message: flags byte, big-endian length, payload. */
function envelopeOf(flags: number, message: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(ENVELOPE_HEADER + message.byteLength);
  out[0] = flags;
  out.writeUInt32BE(message.byteLength, 1);
  out.set(message, ENVELOPE_HEADER);
  return out;
}

/** The body connect-node reads, as `readJudged` found it (a refusal fails it with the refusal's error). */
async function* judgedBody(
  body: AsyncIterable<Uint8Array>,
  framing: Framing,
  bound: BodyBound,
): AsyncGenerator<Uint8Array> {
  const judged = await readJudged(body, framing, bound);
  if (judged instanceof Refusal) throw connectErrorOf(judged.error);
  if (judged instanceof Inflated) {
    yield framing.enveloped ? envelopeOf(judged.flags, judged.message) : judged.message;
    return;
  }
  yield* judged;
}

/** A body that fails with `error` when read. */
function failing(error: unknown): AsyncIterable<Uint8Array> {
  return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }) };
}

/** A request as connect-node should read it: its headers and body. */
export interface BoundedRequest {
  readonly header: Headers;
  readonly body: AsyncIterable<Uint8Array>;
}

/**
 * The request connect-node should read: the same headers and bytes, or, when the checks above refuse
 * them, a body that fails with the refusal's error, or, when they decompressed its message, that
 * message handed on uncompressed (header comment). Never rejects: a failure to read the body (the
 * client gone) fails the body handed on.
 */
export async function boundedRequest(
  body: AsyncIterable<Uint8Array>,
  header: Headers,
  bound: BodyBound,
): Promise<BoundedRequest> {
  const framing = framingOf(header);
  const kind = bound.method.methodKind;
  if (framing === undefined || kind === "client_streaming" || kind === "bidi_streaming") return { header, body };
  const encoding = framing.encoding;
  if (framing.enveloped || !isDecompressed(encoding)) return { header, body: judgedBody(body, framing, bound) };
  // A compressed Connect unary body: whether it goes on without its content-encoding is known once it is read.
  let judged: Refusal | Inflated | Uint8Array[];
  try {
    judged = await readJudged(body, framing, bound);
  } catch (err) {
    return { header, body: failing(err) };
  }
  if (judged instanceof Refusal) return { header, body: failing(connectErrorOf(judged.error)) };
  if (!(judged instanceof Inflated)) return { header, body: judgedChunks(judged) };
  const plain = new Headers(header);
  plain.delete("content-encoding");
  plain.set("content-length", String(judged.message.byteLength));
  // connect-node answers a client that names no accepted encoding in its request's encoding.
  if ((plain.get("accept-encoding") ?? "") === "") plain.set("accept-encoding", encoding);
  return { header: plain, body: judgedChunks([judged.message]) };
}

async function* judgedChunks(chunks: readonly Uint8Array[]): AsyncGenerator<Uint8Array> {
  yield* chunks;
}
