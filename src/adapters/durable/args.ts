// A framework's tool-call arguments as the JSON object the journal keeps (docs/integrations.md).
// Invariant: JSON text or a value that is not one JSON object — an array, a scalar, text that does not
// parse — is an AdapterError naming what it got, never a bare SyntaxError or a non-object args field.
import type { JsonObject } from "@bufbuild/protobuf";
import { AdapterError } from "./errors.js";

/** The arguments of a tool call, given as JSON text ("" is `{}`) or as the parsed value. */
export function argsOf(input: unknown): JsonObject {
  let value: unknown = input;
  if (typeof input === "string") {
    try {
      value = input.trim() === "" ? {} : (JSON.parse(input) as unknown);
    } catch {
      throw new AdapterError(`a tool call's arguments must be a JSON object, got ${input.slice(0, 64)}`);
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new AdapterError(`a tool call's arguments must be a JSON object, got ${JSON.stringify(value)?.slice(0, 64)}`);
  return value as JsonObject;
}
