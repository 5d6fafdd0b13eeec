// RFC 8785 (JCS) canonical JSON. Invariant: the same JSON value always yields the same bytes, and
// anything that is not a JSON value (undefined, functions, symbols, bigint, NaN, ±Infinity, lone
// surrogates) is refused instead of being silently emitted as invalid JSON. The common case (plain
// JSON trees, e.g. proto3-JSON) is checked and serialized in one pass; anything unusual takes the
// original path (full check, then the `canonicalize` package), so results and errors are unchanged.
import canonicalize from "canonicalize";
import { ErrorCode, HostError } from "../errors/index.js";

/** Thrown when a value has no canonical JSON form (ErrorCode.NotCanonicalizable in the one table). */
export class NotCanonicalizableError extends HostError {
  override readonly name = "NotCanonicalizableError";
  constructor(message: string) {
    super(ErrorCode.NotCanonicalizable, message);
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function assertJsonValue(value: unknown, path: string): void {
  switch (typeof value) {
    case "string":
      if (LONE_SURROGATE.test(value)) throw new NotCanonicalizableError(`${path}: string holds a lone surrogate`);
      return;
    case "number":
      if (!Number.isFinite(value)) throw new NotCanonicalizableError(`${path}: number ${value} is not finite`);
      return;
    case "boolean":
      return;
    case "object": {
      if (value === null) return;
      if (Array.isArray(value)) {
        for (const [i, v] of value.entries()) assertJsonValue(v, `${path}[${i}]`);
        return;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) {
        throw new NotCanonicalizableError(
          `${path}: ${(value as object).constructor?.name ?? "object"} is not a plain JSON object`,
        );
      }
      for (const [k, v] of Object.entries(value)) {
        if (LONE_SURROGATE.test(k)) throw new NotCanonicalizableError(`${path}: key holds a lone surrogate`);
        assertJsonValue(v, `${path}.${k}`);
      }
      return;
    }
    default:
      throw new NotCanonicalizableError(`${path}: ${typeof value} is not a JSON value`);
  }
}

/** Past this nesting depth the one-pass serializer gives up and the original path decides. */
const MAX_FAST_DEPTH = 256;

/**
 * JCS text of a plain JSON tree in one pass, or undefined as soon as anything is not plain (then the
 * caller takes the original path). Same output as `canonicalize` on every value it accepts: keys in
 * UTF-16 code-unit order (Array.prototype.sort's default), strings and numbers via JSON.stringify.
 */
export function plainJcs(value: unknown, depth: number): string | undefined {
  switch (typeof value) {
    case "string":
      return LONE_SURROGATE.test(value) ? undefined : JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : undefined;
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (value === null) return "null";
      if (depth > MAX_FAST_DEPTH) return undefined;
      if (Array.isArray(value)) {
        const items = value as unknown[];
        let out = "[";
        for (let i = 0; i < items.length; i++) {
          if (!(i in items)) return undefined;
          const item = plainJcs(items[i], depth + 1);
          if (item === undefined) return undefined;
          out += i === 0 ? item : `,${item}`;
        }
        return `${out}]`;
      }
      if (Object.getPrototypeOf(value) !== Object.prototype) return undefined;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record).sort();
      let out = "{";
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        if (LONE_SURROGATE.test(key)) return undefined;
        const item = plainJcs(record[key], depth + 1);
        if (item === undefined) return undefined;
        out += `${i === 0 ? "" : ","}${JSON.stringify(key)}:${item}`;
      }
      return `${out}}`;
    }
    default:
      return undefined;
  }
}

/** Canonical JSON text of a JSON value (RFC 8785). */
export function jcs(value: unknown): string {
  const fast = plainJcs(value, 0);
  if (fast !== undefined) return fast;
  assertJsonValue(value, "$");
  const text = canonicalize(value);
  if (text === undefined) throw new NotCanonicalizableError("$: value has no JSON form");
  return text;
}
