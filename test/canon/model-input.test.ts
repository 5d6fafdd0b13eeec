// The model-input hash (I0; docs/protocol.md §5.3): the direct text-only form and the reflective form
// agree on every request, any change to the request changes the hash, and the hash of fixed requests
// is pinned — the §5.3 worked example read from the document, and a request with params, tools and
// tool_choice pinned here — so a change to both code paths at once cannot pass unseen (it would break
// every journal already written and every other implementation).
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { create } from "@bufbuild/protobuf";
import { ModelCallSchema, ToolChoice_Mode } from "../../src/gen/agentsessions/v1/common_pb.js";
import { canonicalProto } from "../../src/canon/hash.js";
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

/** Both code paths must give `hash`. */
function expectHash(init: Parameters<typeof create<typeof ModelCallSchema>>[1], hash: string): void {
  const call = create(ModelCallSchema, init);
  expect(modelInputHash(call), "modelInputHash").toBe(hash);
  expect(reflectiveModelInputHash(call), "reflectiveModelInputHash").toBe(hash);
}

describe("model-input hash, pinned", () => {
  it("the worked example of docs/protocol.md §5.3 hashes to the value the document shows", () => {
    const protocol = readFileSync(join(resolve(import.meta.dirname, "../.."), "docs/protocol.md"), "utf8");
    const section = protocol.slice(protocol.indexOf("### §5.3 "), protocol.indexOf("### §5.4 "));
    const m = /has the canonical form\n\n```\n(\{.*\})\n```\n\nand the input hash `([0-9a-f]{64})`/.exec(section);
    const [, canonical, hash] = m ?? [];
    if (canonical === undefined || hash === undefined)
      throw new Error("docs/protocol.md §5.3 no longer shows a canonical form and an input hash");
    // The request as the prose describes it, built here rather than parsed from the document, with
    // `id` and `input_hash` set: the hash leaves them out.
    const init = {
      model: "echo",
      id: "call-1",
      inputHash: "not part of the hash",
      messages: [{ role: "user", parts: [{ part: { case: "text" as const, value: { text: "HI" } } }] }],
    };
    expect(canonicalProto(ModelCallSchema, create(ModelCallSchema, { ...init, id: "", inputHash: "" }))).toBe(
      canonical,
    );
    expectHash(init, hash);
    expect(hash).toBe("4ca59ffd8b556fc328f64741be4a71b32fd985873f24810e6229d110eeb98d85");
  });

  it("a request with params, several part kinds, tools and tool_choice hashes to its pinned value", () => {
    // The canonical text below was written by hand from the rules of §5.2/§5.3 (proto field names,
    // enum names, bytes as base64, JCS key order, UTF-8) and its SHA-256 computed independently.
    const canonical =
      '{"messages":[{"parts":[{"text":{"text":"be brief"}}],"role":"system"},{"parts":[{"text":{"text":"weather in Tromsø?"}},' +
      '{"data":{"data":{"city":"Tromsø","days":2}}},{"file":{"bytes":"AQID","mime":"application/octet-stream"}}],"role":"user"}],' +
      '"model":"gpt-x","params":{"max_tokens":"64","temperature":"0.2"},"tool_choice":{"mode":"MODE_REQUIRED","name":"get_weather"},' +
      '"tools":[{"description":"Looks up the weather","input_schema":{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"},"name":"get_weather"}]}';
    const hash = "05628e482da5b19fe966b1403fa37274144b4c4bfff9471e5c0a8c8bad241ee7";
    const init = {
      model: "gpt-x",
      id: "call-2",
      params: { temperature: "0.2", max_tokens: "64" },
      messages: [
        { role: "system", parts: [{ part: { case: "text" as const, value: { text: "be brief" } } }] },
        {
          role: "user",
          parts: [
            { part: { case: "text" as const, value: { text: "weather in Tromsø?" } } },
            { part: { case: "data" as const, value: { data: { days: 2, city: "Tromsø" } } } },
            {
              part: {
                case: "file" as const,
                value: {
                  mime: "application/octet-stream",
                  source: { case: "bytes" as const, value: Uint8Array.of(1, 2, 3) },
                },
              },
            },
          ],
        },
      ],
      tools: [
        {
          name: "get_weather",
          description: "Looks up the weather",
          inputSchema: { type: "object", required: ["city"], properties: { city: { type: "string" } } },
        },
      ],
      toolChoice: { mode: ToolChoice_Mode.REQUIRED, name: "get_weather" },
    };
    expect(canonicalProto(ModelCallSchema, create(ModelCallSchema, { ...init, id: "" }))).toBe(canonical);
    expectHash(init, hash);
  });
});
