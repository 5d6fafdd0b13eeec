// The one-pass JCS serializer (src/canon/jcs.ts, a speed change) must be byte-identical to the
// `canonicalize` package on every JSON value, and keep refusing what is not a JSON value.
import canonicalize from "canonicalize";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jcs, NotCanonicalizableError } from "../../src/canon/index.js";

describe("jcs fast path", () => {
  it("equals canonicalize on arbitrary JSON values (unicode keys and strings included)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jcs(value)).toBe(canonicalize(value));
      }),
      { numRuns: 300 },
    );
  });

  it("sorts keys by UTF-16 code units and keeps -0 and exponents as JSON.stringify prints them", () => {
    expect(jcs({ b: 1, a: [true, null, -0, 1e21, 0.1], "\u{1F600}": "x", "\uFFFF": "y" })).toBe(
      canonicalize({ b: 1, a: [true, null, -0, 1e21, 0.1], "\u{1F600}": "x", "\uFFFF": "y" }),
    );
  });

  it("still refuses non-JSON values with the path of the offending value", () => {
    expect(() => jcs({ a: [1, Number.NaN] })).toThrow(NotCanonicalizableError);
    expect(() => jcs({ a: [1, Number.NaN] })).toThrow("$.a[1]");
    expect(() => jcs({ s: "\uD800" })).toThrow("lone surrogate");
    expect(() => jcs({ d: new Date(0) })).toThrow("not a plain JSON object");
    expect(() => jcs({ u: undefined })).toThrow(NotCanonicalizableError);
  });

  it("accepts null-prototype objects like the original path", () => {
    const o = Object.assign(Object.create(null) as Record<string, unknown>, { z: 1, a: "b" });
    expect(jcs(o)).toBe('{"a":"b","z":1}');
  });
});
