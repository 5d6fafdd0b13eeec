// The requestMessages bound (wire/service.ts DecodeBound) on the HTTP listener, where connect-node
// decodes inside itself with no hook before decoding. Invariant: a request to a bounded service has its
// whole body read (what connect-node would read anyway) and counted before connect-node sees any of it;
// over the bound, the body it is handed fails with the bound's error, so the call is answered
// RESOURCE_EXHAUSTED in its own protocol and nothing is decoded. Binary proto (Connect unary, or the one
// request envelope of Connect streaming and gRPC-Web) is counted with the gRPC listener's counter
// (wire/message-count.ts), after decompression (at most requestBytes) when the request is compressed; a
// JSON body counts its JSON values (every `{`, `[`, `:` and `,` outside strings, plus one), an upper
// bound on the messages it decodes into. A body over twice requestBytes, or one that cannot be framed
// or decompressed, is passed through uncounted: connect-node refuses it itself (readMaxBytes).
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import type { DescMessage } from "@bufbuild/protobuf";
import { countMessages } from "../wire/message-count.js";
import { connectErrorOf } from "./connect-service.js";
import type { DecodeBound } from "../wire/index.js";

type Framing = { kind: "whole"; encoding: string | undefined } | { kind: "envelopes"; encoding: string | undefined };

/** How a request body of this content type carries its message(s), or undefined when not counted. */
function framingOf(headers: Headers): { json: boolean; framing: Framing } | undefined {
  const type = (headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type === "application/proto" || type === "application/json") {
    return {
      json: type === "application/json",
      framing: { kind: "whole", encoding: headers.get("content-encoding") ?? undefined },
    };
  }
  const envelope = /^application\/(connect|grpc-web|grpc)(\+(proto|json))?$/.exec(type);
  if (envelope === null || (envelope[1] === "connect" && envelope[3] === undefined)) return undefined;
  const header = envelope[1] === "connect" ? "connect-content-encoding" : "grpc-encoding";
  return { json: envelope[3] === "json", framing: { kind: "envelopes", encoding: headers.get(header) ?? undefined } };
}

function decompress(bytes: Uint8Array, encoding: string | undefined, maxBytes: number): Uint8Array {
  if (encoding === undefined || encoding === "identity") return bytes;
  if (encoding === "gzip") return gunzipSync(bytes, { maxOutputLength: maxBytes });
  if (encoding === "br") return brotliDecompressSync(bytes, { maxOutputLength: maxBytes });
  throw new Error(`unknown encoding ${encoding}`);
}

/**
 * The request message's payload: the whole body, or the first data envelope's. The bounded services
 * take one request message per call (no client streaming), and connect-node refuses a second envelope
 * itself, so only one payload is ever decompressed (at most `maxBytes`) and counted.
 */
function payloadOf(body: Uint8Array, framing: Framing, maxBytes: number): Uint8Array | undefined {
  if (framing.kind === "whole") return decompress(body, framing.encoding, maxBytes);
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  for (let at = 0; at + 5 <= body.byteLength; ) {
    const flags = body[at] ?? 0;
    const len = view.getUint32(at + 1);
    const payload = body.subarray(at + 5, at + 5 + len);
    if ((flags & 0x80) === 0) return (flags & 1) === 1 ? decompress(payload, framing.encoding, maxBytes) : payload;
    at += 5 + len;
  }
  return undefined;
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

/** The body's chunks read so far, and all its bytes when it ended within twice `maxBytes`. */
async function readAll(
  it: AsyncIterator<Uint8Array>,
  maxBytes: number,
): Promise<{ chunks: Uint8Array[]; bytes?: Uint8Array }> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (let next = await it.next(); next.done !== true; next = await it.next()) {
    chunks.push(next.value);
    total += next.value.byteLength;
    // Envelope headers are 5 bytes each; anything this much larger is connect-node's to refuse.
    if (total > maxBytes * 2) return { chunks };
  }
  return { chunks, bytes: Buffer.concat(chunks) };
}

/**
 * `body` as connect-node should read it: the same bytes, or, when they would decode into more than
 * `bound.maxMessages` messages of `input`, an iterable that fails with the bound's error.
 */
export async function* boundedBody(
  body: AsyncIterable<Uint8Array>,
  headers: Headers,
  input: DescMessage,
  bound: DecodeBound,
  maxBytes: number,
): AsyncGenerator<Uint8Array> {
  const kind = framingOf(headers);
  if (kind === undefined) {
    yield* body;
    return;
  }
  const it = body[Symbol.asyncIterator]();
  const { chunks, bytes } = await readAll(it, maxBytes);
  if (bytes !== undefined) {
    let payload: Uint8Array | undefined;
    try {
      payload = payloadOf(bytes, kind.framing, maxBytes);
    } catch {
      payload = undefined;
    }
    if (payload !== undefined) {
      const count = kind.json
        ? countJsonValues(payload, bound.maxMessages)
        : countMessages(input, payload, bound.maxMessages);
      if (count > bound.maxMessages) throw connectErrorOf(bound.refuse(count, input.typeName));
    }
  }
  yield* chunks;
  yield* { [Symbol.asyncIterator]: () => it };
}
