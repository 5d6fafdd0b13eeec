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

/** Records an event's encoding length where a caller already encoded it (journals on append). */
export function noteEventBytes(event: Event, bytes: Uint8Array): Uint8Array {
  sizes.set(event, bytes.byteLength);
  return bytes;
}
