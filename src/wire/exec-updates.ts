// The Exec update shape a client may negotiate (docs/protocol.md §20). Invariants: a call without the
// header gets the reference's stream unchanged, so a Go client never sees a difference; a value the
// host does not know is refused, never guessed at; the host answers an accepted shape by echoing it in
// the response headers, so a client knows whether the stream will close with a Session frame (a host
// that ignores the header — the Go reference — echoes nothing). The `final` shape packs frames: one
// message holds several encoded ExecUpdate frames back to back, each byte for byte what it would be as
// a message of its own, so a plain protobuf decoder reads the message as its last frame and a client
// that asked for `final` splits it back into the frames. Both ends share this module.

/** Request header naming the shape; echoed in the response headers when the host honours it. */
export const EXEC_UPDATES_HEADER = "x-harnesshost-exec-updates";

/**
 * `all`: every update of the reference stream, then one closing Session frame (the session after the
 * turn, as GetSession would serve it). `records`: the same without delta frames. `final`: only the
 * turn's records and the closing Session frame, sent once the turn settled, packed into few messages.
 */
export const EXEC_UPDATE_SHAPES = ["all", "records", "final"] as const;
export type ExecUpdateShape = (typeof EXEC_UPDATE_SHAPES)[number];

/** What a request asked for: the reference stream (no header), a known shape, or a refusal's reason. */
export type ExecShapeRequest =
  | { readonly kind: "reference" }
  | { readonly kind: "shape"; readonly shape: ExecUpdateShape }
  | { readonly kind: "refused"; readonly reason: string };

/** Reads the header's values (as grpc-js Metadata.get returns them). */
export function execShapeOf(values: readonly (string | Buffer)[]): ExecShapeRequest {
  if (values.length === 0) return { kind: "reference" };
  const expected = `expected one of: ${EXEC_UPDATE_SHAPES.join(", ")}`;
  if (values.length > 1)
    return { kind: "refused", reason: `${EXEC_UPDATES_HEADER} was sent more than once; ${expected}` };
  const value = values[0];
  const shape = EXEC_UPDATE_SHAPES.find((s) => s === value);
  if (shape === undefined) {
    const shown = typeof value === "string" ? JSON.stringify(value.slice(0, 64)) : "a binary value";
    return { kind: "refused", reason: `${EXEC_UPDATES_HEADER} ${shown} is not a known shape; ${expected}` };
  }
  return { kind: "shape", shape };
}

/** Bytes a packed message is filled to before the next frame starts a new one (far below 4 MiB). */
export const PACKED_MESSAGE_BYTES = 1 << 20;

/**
 * Encoded frames grouped into messages: each message is its frames' bytes back to back, filled up to
 * `limit` bytes (a frame larger than that goes alone), with how many frames it holds; order is kept.
 */
export function packFrames(
  frames: readonly Uint8Array[],
  limit = PACKED_MESSAGE_BYTES,
): { bytes: Buffer; frames: number }[] {
  const messages: { bytes: Buffer; frames: number }[] = [];
  let group: Uint8Array[] = [];
  let bytes = 0;
  for (const frame of frames) {
    if (group.length > 0 && bytes + frame.byteLength > limit) {
      messages.push({ bytes: Buffer.concat(group, bytes), frames: group.length });
      group = [];
      bytes = 0;
    }
    group.push(frame);
    bytes += frame.byteLength;
  }
  if (group.length > 0) messages.push({ bytes: Buffer.concat(group, bytes), frames: group.length });
  return messages;
}

/**
 * The frames of a packed message: one slice per top-level field (each a whole ExecUpdate encoding),
 * or undefined when the message holds one field or is not a run of length-delimited fields (then it
 * is decoded as it is).
 */
export function unpackFrames(bytes: Uint8Array): Uint8Array[] | undefined {
  const frames: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    const start = at;
    const tag = varint(bytes, at);
    if (tag === undefined || (tag.value & 7) !== 2) return undefined;
    const len = varint(bytes, tag.next);
    if (len === undefined || len.next + len.value > bytes.length) return undefined;
    at = len.next + len.value;
    frames.push(bytes.subarray(start, at));
  }
  return frames.length > 1 ? frames : undefined;
}

/** A varint of at most 32 bits at `at` (tags and lengths of a message under 4 GiB). */
function varint(bytes: Uint8Array, at: number): { value: number; next: number } | undefined {
  let value = 0;
  for (let i = 0; i < 5 && at + i < bytes.length; i++) {
    const b = bytes[at + i] ?? 0;
    value += (b & 0x7f) * 2 ** (7 * i);
    if (b < 0x80) return { value, next: at + i + 1 };
  }
  return undefined;
}
