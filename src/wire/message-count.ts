// How many protobuf messages a request would decode into, counted on its bytes before decoding.
// Invariant: the count walks the wire format against the message's descriptor without building any
// object (length-delimited sub-messages are visited in place, everything else is skipped), stops as
// soon as it passes the bound, and never recurses deeper than the decoder would: bytes the decoder
// would refuse (malformed, too deep) are left to the decoder, which refuses them itself.
import type { DescField, DescMessage } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";

/** The decoder's own recursion limit (protobuf-es fromBinary's default). */
const DECODER_DEPTH = 100;

const byNumber = new WeakMap<DescMessage, Map<number, DescMessage>>();

/** The message type each message-typed field of `desc` holds (list elements and map values included). */
function messageFields(desc: DescMessage): Map<number, DescMessage> {
  let fields = byNumber.get(desc);
  if (fields === undefined) {
    fields = new Map();
    for (const f of desc.fields) {
      const sub = subMessage(f);
      if (sub !== undefined) fields.set(f.number, sub);
    }
    byNumber.set(desc, fields);
  }
  return fields;
}

function subMessage(f: DescField): DescMessage | undefined {
  if (f.fieldKind === "message") return f.message;
  if (f.fieldKind === "list" && f.listKind === "message") return f.message;
  return undefined;
}

/**
 * The messages `bytes` decodes into as `desc` (itself included), or a number above `max` as soon as
 * the count passes it. Map fields count their entries; malformed bytes count what was read so far.
 */
export function countMessages(desc: DescMessage, bytes: Uint8Array, max: number): number {
  let count = 0;
  const visit = (d: DescMessage, b: Uint8Array, depth: number): void => {
    count++;
    if (count > max || depth >= DECODER_DEPTH) return;
    const fields = messageFields(d);
    const reader = new BinaryReader(b);
    while (reader.pos < reader.len && count <= max) {
      const [number, wireType] = reader.tag();
      if (wireType !== WireType.LengthDelimited) {
        reader.skip(wireType, number);
        continue;
      }
      const body = reader.bytes();
      const sub = fields.get(number);
      if (sub !== undefined) visit(sub, body, depth + 1);
      else if (isMapOfMessages(d, number)) visitMapEntry(d, number, body, depth + 1);
    }
  };
  const visitMapEntry = (d: DescMessage, number: number, entry: Uint8Array, depth: number): void => {
    count++;
    const field = d.fields.find((f) => f.number === number);
    if (field?.fieldKind !== "map" || field.mapKind !== "message") return;
    const reader = new BinaryReader(entry);
    while (reader.pos < reader.len && count <= max) {
      const [n, wt] = reader.tag();
      if (n === 2 && wt === WireType.LengthDelimited) visit(field.message, reader.bytes(), depth + 1);
      else reader.skip(wt, n);
    }
  };
  try {
    visit(desc, bytes, 0);
  } catch {
    // Malformed: the decoder refuses it with its own error.
  }
  return count;
}

function isMapOfMessages(d: DescMessage, number: number): boolean {
  const field = d.fields.find((f) => f.number === number);
  return field?.fieldKind === "map" && field.mapKind === "message";
}
