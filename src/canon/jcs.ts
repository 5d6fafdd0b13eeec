// RFC 8785 (JCS) canonical JSON. Invariant: the same JSON value always yields the same bytes, and
// anything that is not a JSON value (undefined, functions, symbols, bigint, NaN, ±Infinity, lone
// surrogates) is refused instead of being silently emitted as invalid JSON.
import canonicalize from "canonicalize";

/** Thrown when a value has no canonical JSON form. */
export class NotCanonicalizableError extends Error {
  override readonly name = "NotCanonicalizableError";
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
        value.forEach((v, i) => assertJsonValue(v, `${path}[${i}]`));
        return;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) {
        throw new NotCanonicalizableError(`${path}: ${(value as object).constructor?.name ?? "object"} is not a plain JSON object`);
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

/** Canonical JSON text of a JSON value (RFC 8785). */
export function jcs(value: unknown): string {
  assertJsonValue(value, "$");
  const text = canonicalize(value);
  if (text === undefined) throw new NotCanonicalizableError("$: value has no JSON form");
  return text;
}
