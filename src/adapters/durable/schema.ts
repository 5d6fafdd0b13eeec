// A framework's tool schema as the JSON object a ToolDefinition carries (docs/integrations.md).
// Invariant: a schema object is copied once — the frameworks offer the same object on every model call
// of a harness (the AI SDK adapter makes its schemas once per harness, the Agents SDK keeps each tool's
// parameters), so a turn's tool offers cost one lookup each; an offered schema is taken as immutable.
import type { JsonObject } from "@bufbuild/protobuf";

const copies = new WeakMap<object, JsonObject>();

/** A JSON-safe copy of `schema` (an absent one is `{}`), made once per schema object. */
export function schemaCopyOf(schema: unknown): JsonObject {
  if (typeof schema !== "object" || schema === null) return {};
  let copy = copies.get(schema);
  if (!copy) {
    copy = JSON.parse(JSON.stringify(schema)) as JsonObject;
    copies.set(schema, copy);
  }
  return copy;
}
