// The encoded size of an event, the unit of the host caches' byte budgets. Invariant: the size is the
// event's protobuf encoding length, computed at most once per event object.
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
