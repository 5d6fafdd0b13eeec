// countMessages counts on the bytes what decoding would build: every message, list element and map
// entry (a Struct's values), stops once past the bound, and leaves malformed or too-deep bytes to the
// decoder without throwing.
import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { MessageSchema, PartSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ExecRequestSchema } from "../../src/gen/agentsessions/v1/session_pb.js";
import { countMessages } from "../../src/wire/message-count.js";

describe("countMessages", () => {
  it("countsEveryMessageListElementAndMapEntryBeforeDecoding", () => {
    const req = create(ExecRequestSchema, {
      inputs: [
        create(MessageSchema, {
          role: "user",
          parts: [
            create(PartSchema, { part: { case: "text", value: { text: "a" } } }),
            create(PartSchema, { part: { case: "data", value: { data: { x: 1, y: "z" } } } }),
          ],
        }),
      ],
    });
    const bytes = toBinary(ExecRequestSchema, req);
    // ExecRequest, Message, 2 Parts, TextPart, DataPart, Struct, 2 map entries and their 2 Values.
    expect(countMessages(ExecRequestSchema, bytes, 1000)).toBe(11);
  });

  it("stopsOncePastTheBound", () => {
    const parts = Array.from({ length: 10_000 }, () => create(PartSchema, {}));
    const bytes = toBinary(ExecRequestSchema, create(ExecRequestSchema, { inputs: [{ role: "user", parts }] }));
    expect(countMessages(ExecRequestSchema, bytes, 1_000_000)).toBe(10_002);
    expect(countMessages(ExecRequestSchema, bytes, 100)).toBe(101);
  });

  it("malformedBytesAreLeftToTheDecoder", () => {
    expect(() => countMessages(ExecRequestSchema, new Uint8Array([0x12, 0xff, 0xff, 0xff]), 10)).not.toThrow();
  });
});
