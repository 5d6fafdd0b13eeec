// How deep a decoded protobuf-es message nests, counted as the binary decoder counts it, without
// encoding it. Invariant: the depth is never less than the recursion depth fromBinary reaches when it
// decodes the message's encoding (every message entered counts one: singular fields, list elements,
// map values; google.protobuf.Struct / Value / ListValue fields, which protobuf-es holds as plain JSON,
// count their messages), so `messageDepth(m) <= limit` proves the encoding decodes within `limit`. A
// message carrying unknown fields (raw bytes, which may hold groups the decoder skips by recursion) is
// reported as unbounded: the caller decodes it to know.
import type { DescField, DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";

/** What messageDepth reports for a message it cannot bound (unknown fields). */
export const UNBOUNDED_DEPTH = Number.POSITIVE_INFINITY;

const STRUCT = "google.protobuf.Struct";
const VALUE = "google.protobuf.Value";
const LIST_VALUE = "google.protobuf.ListValue";

type Fields = Record<string, unknown> & { $unknown?: readonly unknown[] };

/**
 * The depth of `message` (1 for a message with no message-typed field set), or a number above `limit`
 * as soon as it passes it, or UNBOUNDED_DEPTH when unknown fields make it unknowable without decoding.
 */
export function messageDepth(desc: DescMessage, message: object, limit: number): number {
  return depthOf(desc, message as Fields, 1, limit);
}

function depthOf(desc: DescMessage, message: Fields, at: number, limit: number): number {
  if (at > limit) return at;
  if (message.$unknown !== undefined && message.$unknown.length > 0) return UNBOUNDED_DEPTH;
  let deepest = at;
  for (const field of desc.fields) {
    const child = fieldDepth(field, fieldValue(field, message), at, limit);
    if (child > deepest) deepest = child;
    if (deepest > limit) return deepest;
  }
  return deepest;
}

/** The field's value (a oneof member's only when its case is set). */
function fieldValue(field: DescField, message: Fields): unknown {
  if (field.oneof !== undefined) {
    const oneof = message[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
    return oneof?.case === field.localName ? oneof.value : undefined;
  }
  return message[field.localName];
}

/** The deepest level a field's value reaches when the message holding it is at level `at`. */
function fieldDepth(field: DescField, value: unknown, at: number, limit: number): number {
  if (value === undefined) return at;
  // JSON null in a google.protobuf.Value field is a set Value (null_value); elsewhere null is unset.
  if (value === null && !(field.fieldKind === "message" && field.message.typeName === VALUE)) return at;
  switch (field.fieldKind) {
    case "message":
      return nestedDepth(field.message, value, at + 1, limit);
    case "list": {
      if (field.listKind !== "message") return at;
      let deepest = at;
      for (const item of value as readonly unknown[]) {
        deepest = Math.max(deepest, nestedDepth(field.message, item, at + 1, limit));
        if (deepest > limit) return deepest;
      }
      return deepest;
    }
    case "map": {
      if (field.mapKind !== "message") return at;
      let deepest = at;
      for (const item of Object.values(value as Record<string, unknown>)) {
        deepest = Math.max(deepest, nestedDepth(field.message, item, at + 1, limit));
        if (deepest > limit) return deepest;
      }
      return deepest;
    }
    case "scalar":
    case "enum":
      return at;
    default: {
      const exhaustive: never = field;
      return exhaustive;
    }
  }
}

/** A message of type `desc` entered at level `at`: JSON for the three JSON types, else a message. */
function nestedDepth(desc: DescMessage, value: unknown, at: number, limit: number): number {
  switch (desc.typeName) {
    case STRUCT:
      return structDepth(value as JsonObject, at, limit);
    case VALUE:
      return jsonValueDepth(value as JsonValue, at, limit);
    case LIST_VALUE:
      return listDepth(value as readonly JsonValue[], at, limit);
    default:
      return depthOf(desc, value as Fields, at, limit);
  }
}

/** A Struct at level `at`: each of its values is a Value message one level down. */
function structDepth(object: JsonObject, at: number, limit: number): number {
  let deepest = at;
  for (const item of Object.values(object)) {
    deepest = Math.max(deepest, jsonValueDepth(item, at + 1, limit));
    if (deepest > limit) return deepest;
  }
  return deepest;
}

/** A ListValue at level `at`: each element is a Value message one level down. */
function listDepth(list: readonly JsonValue[], at: number, limit: number): number {
  let deepest = at;
  for (const item of list) {
    deepest = Math.max(deepest, jsonValueDepth(item, at + 1, limit));
    if (deepest > limit) return deepest;
  }
  return deepest;
}

/** A Value message at level `at`: an object or array in it is a Struct or ListValue one level down. */
function jsonValueDepth(value: JsonValue, at: number, limit: number): number {
  if (at > limit) return at;
  if (Array.isArray(value)) return listDepth(value, at + 1, limit);
  if (typeof value === "object" && value !== null) return structDepth(value as JsonObject, at + 1, limit);
  return at;
}
