// The model-input hash (I0; docs/protocol.md §5): the direct text-only form and the reflective form
// agree on every request, and any change to the request changes the hash.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { create } from "@bufbuild/protobuf";
import { ModelCallSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { modelInputHash, reflectiveModelInputHash } from "../../src/canon/model-input.js";

const text = fc.oneof(
  fc.constant(""),
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.string({ unit: "binary", maxLength: 6 }),
);
const part = fc.oneof(
  text.map((t) => ({ part: { case: "text" as const, value: { text: t } } })),
  fc.constant({}),
  text.map((t) => ({ part: { case: "data" as const, value: { data: { k: t } } } })),
);
const request = fc.record({
  model: fc.oneof(fc.constant(""), fc.string(), fc.string({ unit: "binary", maxLength: 4 })),
  params: fc.dictionary(
    fc.oneof(fc.string({ maxLength: 5 }), fc.string({ unit: "binary", maxLength: 3 })),
    fc.string({ maxLength: 5 }),
    { maxKeys: 3 },
  ),
  messages: fc.array(
    fc.record({ role: fc.constantFrom("", "user", "assistant", "system"), parts: fc.array(part, { maxLength: 3 }) }),
    { maxLength: 4 },
  ),
  tools: fc.boolean().map((withTool) => (withTool ? [{ name: "t" }] : [])),
});

function outcome(f: () => string): string {
  try {
    return f();
  } catch (err) {
    return `throws ${err instanceof Error ? err.name : String(err)}`;
  }
}

describe("model-input hash", () => {
  it("the direct form equals the reflective form on random requests", () => {
    fc.assert(
      fc.property(request, (init) => {
        const call = create(ModelCallSchema, init);
        // Equal hashes, or the same refusal (a lone surrogate has no canonical JSON form).
        expect(outcome(() => modelInputHash(call))).toBe(outcome(() => reflectiveModelInputHash(call)));
      }),
      { numRuns: 1000 },
    );
  });

  it("a different text, role, model or param gives a different hash", () => {
    const base = {
      model: "m",
      params: { a: "1" },
      messages: [{ role: "user", parts: [{ part: { case: "text" as const, value: { text: "hi" } } }] }],
    };
    const h = modelInputHash(create(ModelCallSchema, base));
    expect(modelInputHash(create(ModelCallSchema, { ...base, model: "n" }))).not.toBe(h);
    expect(modelInputHash(create(ModelCallSchema, { ...base, params: { a: "2" } }))).not.toBe(h);
    expect(
      modelInputHash(
        create(ModelCallSchema, { ...base, messages: [{ role: "system", parts: base.messages[0]!.parts }] }),
      ),
    ).not.toBe(h);
    expect(
      modelInputHash(
        create(ModelCallSchema, {
          ...base,
          messages: [{ role: "user", parts: [{ part: { case: "text" as const, value: { text: "ho" } } }] }],
        }),
      ),
    ).not.toBe(h);
  });
});
