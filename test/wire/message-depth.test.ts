// messageDepth against protobuf-es's own decoder: for generated inputs (nested parts, JSON objects and
// arrays in data parts, tool calls' args), the depth it reports is exactly the smallest recursion limit
// the input's encoding decodes within — so `depth <= limit` is a proof the decode would pass — and a
// message with unknown fields is reported unbounded (the caller decodes it).
import { create, fromBinary, type JsonValue, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MessageSchema, type Message } from "../../src/gen/agentsessions/v1/common_pb.js";

type MessageInit = MessageInitShape<typeof MessageSchema>;
import { messageDepth, UNBOUNDED_DEPTH } from "../../src/wire/message-depth.js";

/** The smallest recursion limit within which `message`'s encoding decodes. */
function decoderDepth(message: Message): number {
  const bytes = toBinary(MessageSchema, message);
  for (let limit = 1; limit <= 100; limit++) {
    try {
      fromBinary(MessageSchema, bytes, { recursionLimit: limit });
      return limit;
    } catch {
      // deeper than limit
    }
  }
  return 101;
}

const json: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.string({ maxLength: 3 }),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 2 }), tie("value"), { maxKeys: 3 }),
  ),
})).value;

const jsonObject = fc.dictionary(fc.string({ maxLength: 2 }), json, { maxKeys: 3 });

type PartInit = NonNullable<MessageInit["parts"]>[number];

/** Parts, a tool result's content nesting parts of its own. */
const part: fc.Arbitrary<PartInit> = fc.letrec<{ part: PartInit }>((tie) => ({
  part: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.string({ maxLength: 4 }).map((text) => ({ part: { case: "text" as const, value: { text } } })),
    jsonObject.map((data) => ({ part: { case: "data" as const, value: { data } } })),
    jsonObject.map((args) => ({ part: { case: "toolCall" as const, value: { id: "c", name: "t", args } } })),
    fc
      .tuple(fc.array(tie("part"), { maxLength: 2 }), fc.option(jsonObject, { nil: undefined }))
      .map(([content, output]) => ({
        part: { case: "toolResult" as const, value: { id: "c", content, ...(output ? { output } : {}) } },
      })),
  ),
})).part;

const message: fc.Arbitrary<Message> = fc
  .array(part, { maxLength: 3 })
  .map((parts) => create(MessageSchema, { role: "user", parts }));

describe("messageDepth", () => {
  it("messageDepthIsTheDecodersRecursionDepth for generated inputs", () => {
    fc.assert(
      fc.property(message, (m) => {
        expect(messageDepth(MessageSchema, m, 100)).toBe(decoderDepth(m));
      }),
      { numRuns: 300 },
    );
  });

  it("aDepthAtOrUnderTheLimitProvesTheDecodePasses, and the walk stops once past the limit", () => {
    let data: { [k: string]: JsonValue } = { leaf: true };
    for (let i = 0; i < 40; i++) data = { a: data };
    const deep = create(MessageSchema, { role: "user", parts: [{ part: { case: "data", value: { data } } }] });
    const depth = messageDepth(MessageSchema, deep, 100);
    expect(depth).toBe(decoderDepth(deep));
    expect(() => fromBinary(MessageSchema, toBinary(MessageSchema, deep), { recursionLimit: depth })).not.toThrow();
    expect(() => fromBinary(MessageSchema, toBinary(MessageSchema, deep), { recursionLimit: depth - 1 })).toThrow();
    expect(messageDepth(MessageSchema, deep, 10)).toBeGreaterThan(10);
  });

  it("aMessageWithUnknownFieldsIsUnbounded: its raw bytes are left to the decoder", () => {
    const withUnknown = fromBinary(
      MessageSchema,
      new Uint8Array([...toBinary(MessageSchema, create(MessageSchema, { role: "user" })), 0xfa, 0x3e, 0x00]),
    );
    expect(withUnknown.$unknown?.length).toBe(1);
    expect(messageDepth(MessageSchema, withUnknown, 32)).toBe(UNBOUNDED_DEPTH);
  });
});
