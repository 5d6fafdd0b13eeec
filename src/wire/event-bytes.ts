// The encoded size of an event, the unit of the host caches' byte budgets. Invariants: the size is the
// event's protobuf encoding length, computed at most once per event object; the encodings kept of the
// newest appended events are the very bytes the journal stored for them, bounded (RECENT_EVENTS events,
// RECENT_BYTES bytes, oldest dropped first), and an event whose encoding is not kept is encoded afresh.
import { toBinary } from "@bufbuild/protobuf";
import { EventSchema, type Event } from "../gen/agentsessions/v1/common_pb.js";

const sizes = new WeakMap<Event, number>();

export function eventBytes(event: Event): number {
  let n = sizes.get(event);
  if (n === undefined) {
    n = toBinary(EventSchema, event).byteLength;
    sizes.set(event, n);
  }
  return n;
}

/** The encoding length recorded for this event object, if any (undefined: eventBytes would encode it). */
export function knownEventBytes(event: Event): number | undefined {
  return sizes.get(event);
}

/**
 * Records an event's encoding length where a caller already has the encoding (journals on append, and
 * on the reads that fill the host caches, so a cache never re-encodes what it just decoded).
 */
export function noteEventBytes(event: Event, bytes: Uint8Array): Uint8Array {
  sizes.set(event, bytes.byteLength);
  return bytes;
}

/** How many of the newest appended events keep their encoding for a stream to send (appendedEncoding). */
export const RECENT_EVENTS = 64;
/** The most bytes those encodings hold together; a larger event's encoding is not kept. */
export const RECENT_BYTES = 1024 * 1024;

const recent = new Map<Event, Uint8Array>();
let recentBytes = 0;

/**
 * Notes an event's encoding as a journal appends it (its length too, as noteEventBytes): an Exec
 * stream sending the record just committed takes these bytes instead of encoding the event again.
 */
export function noteAppendedEncoding(event: Event, bytes: Uint8Array): Uint8Array {
  noteEventBytes(event, bytes);
  if (bytes.byteLength > RECENT_BYTES / 4 || recent.has(event)) return bytes;
  recent.set(event, bytes);
  recentBytes += bytes.byteLength;
  for (const [old, kept] of recent) {
    if (recent.size <= RECENT_EVENTS && recentBytes <= RECENT_BYTES) break;
    recent.delete(old);
    recentBytes -= kept.byteLength;
  }
  return bytes;
}

/** The event's encoding: the bytes its append stored when they are still kept (taken once), else encoded now. */
export function appendedEncoding(event: Event): Uint8Array {
  const kept = recent.get(event);
  if (kept === undefined) return toBinary(EventSchema, event);
  recent.delete(event);
  recentBytes -= kept.byteLength;
  return kept;
}

/** Encodings kept now (tests). */
export function keptEncodings(): { readonly events: number; readonly bytes: number } {
  return { events: recent.size, bytes: recentBytes };
}
