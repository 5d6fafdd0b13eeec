// Reference test vectors (docs/protocol.md §5.2, §11.1; the Go implementation's published vectors): the chain must verify across
// implementations, so these hashes are the contract.
import { describe, expect, it } from "vitest";
import { create, fromJson } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { EventKind, EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { HarnessSpecSchema } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { canonicalRecord, hashRecord, jcs, NotCanonicalizableError, protoDigest } from "../../src/canon/index.js";

describe("canon: reference vectors", () => {
  it("vector 1: golden OUTPUT event with ts and actor", () => {
    const ev = create(EventSchema, {
      executionId: "exec-1",
      schemaVersion: 1,
      ts: timestampFromDate(new Date("2023-11-14T22:13:20Z")),
      kind: EventKind.EVENT_OUTPUT,
      body: {
        case: "message",
        value: { role: "assistant", parts: [{ part: { case: "text", value: { text: "hello" } } }] },
      },
      actor: { principal: "agent://a", issuer: "entra", subject: "sub-1" },
    });
    expect(canonicalRecord("", 1, ev)).toBe(
      '{"event":{"actor":{"issuer":"entra","principal":"agent://a","subject":"sub-1"},"execution_id":"exec-1","kind":"EVENT_OUTPUT","message":{"parts":[{"text":{"text":"hello"}}],"role":"assistant"},"schema_version":1,"ts":"2023-11-14T22:13:20Z"},"prev_hash":"","seq":"1"}',
    );
    expect(hashRecord("", 1, ev)).toBe("551bd146050c8d630b0c3b999a4445f3792a470db9bca443d8d4a67706283fcc");
  });

  const jsonVectors: Array<[string, unknown, string]> = [
    [
      "vector 2: EXECUTION_START with bytes config and a 2^53+1 cursor",
      {
        execution_id: "exec-config",
        kind: "EVENT_EXECUTION_START",
        execution_start: { config: "AP8gCgk=", input_count: "2", resume_from_seq: "9007199254740993" },
      },
      "aa1f42a26b7a227836d32d31608ebb69c59f3b1c57eadd8537b6faf88a01c790",
    ],
    [
      "vector 3: optional input_count emitted when zero",
      { execution_id: "exec-default", kind: "EVENT_EXECUTION_START", execution_start: { input_count: "0" } },
      "b09cbff45d5a30990c3b72be8b06af6bc509d5a29a849aab5fd42153ef10ec65",
    ],
    [
      "vector 4: input_count 2",
      { execution_id: "exec-default", kind: "EVENT_EXECUTION_START", execution_start: { input_count: "2" } },
      "f06c25ee5b3673ee23b8f91883c7f1c6c5682d94986caf5bc067908a61b2ac4f",
    ],
    [
      "vector 5: present sub-message",
      { kind: "EVENT_TOOL_RESULT", result: { id: "c1" } },
      "2eddf9826b382796691c15da8ee7dd6af7b41dbab55c949f131ed2933e0b0d8e",
    ],
    [
      "vector 6: false bool omitted",
      { approval_result: { reason: "no", tool_call_id: "c1" }, kind: "EVENT_APPROVAL_RESULT" },
      "c36a909b1ea5f243536ff6b4f1770e99e47b35cb1dfb94c2e943b85a42206bea",
    ],
  ];
  it.each(jsonVectors)("%s", (_name, json, expected) => {
    const ev = fromJson(EventSchema, json as never);
    expect(hashRecord("", 1, ev)).toBe(expected);
  });

  it("vector 11: HarnessSpec spec_digest", () => {
    const spec = fromJson(HarnessSpecSchema, {
      capabilities: { resumability: "RESUMABILITY_STATELESS_REPLAY" },
      descriptor_id: "echo",
      remote: { address: "127.0.0.1:9000" },
    });
    expect(protoDigest(HarnessSpecSchema, spec)).toBe(
      "sha256:f0c96c8b67d5dc75be557f64ccd59496eaf9cfb102754ee54e9d4c571eb2eafc",
    );
  });

  it("canonical-bytes literals from the reference tests", () => {
    const denied = fromJson(EventSchema, {
      execution_id: "e1",
      kind: "EVENT_TOOL_RESULT",
      result: {
        approval_decision_seq: "9007199254740994",
        approval_request_seq: "9007199254740993",
        code: "APPROVAL_DENIED",
        id: "c1",
        is_error: true,
      },
    });
    expect(canonicalRecord("", 1, denied)).toBe(
      '{"event":{"execution_id":"e1","kind":"EVENT_TOOL_RESULT","result":{"approval_decision_seq":"9007199254740994","approval_request_seq":"9007199254740993","code":"APPROVAL_DENIED","id":"c1","is_error":true}},"prev_hash":"","seq":"1"}',
    );
  });

  it("an empty text part is {} and an empty Part is {}", () => {
    const ev = create(EventSchema, {
      kind: EventKind.EVENT_INPUT,
      body: { case: "message", value: { role: "user", parts: [{ part: { case: "text", value: { text: "" } } }, {}] } },
    });
    expect(canonicalRecord("h", 7, ev)).toBe(
      '{"event":{"kind":"EVENT_INPUT","message":{"parts":[{"text":{}},{}],"role":"user"}},"prev_hash":"h","seq":"7"}',
    );
  });

  it("timestamps use 0, 3, 6 or 9 fractional digits", () => {
    const at = (nanos: number) =>
      canonicalRecord(
        "",
        1,
        create(EventSchema, { kind: EventKind.EVENT_OUTPUT, ts: { seconds: 1700000000n, nanos } }),
      );
    expect(at(500_000_000)).toContain('"ts":"2023-11-14T22:13:20.500Z"');
    expect(at(123_456_000)).toContain('"ts":"2023-11-14T22:13:20.123456Z"');
    expect(at(123_456_789)).toContain('"ts":"2023-11-14T22:13:20.123456789Z"');
  });

  it("refuses NaN and Infinity inside a Struct", () => {
    const ev = create(EventSchema, {
      kind: EventKind.EVENT_TOOL_CALL,
      body: {
        case: "tool",
        value: { id: "t", args: { fields: { x: { kind: { case: "numberValue", value: Number.NaN } } } } },
      },
    });
    expect(() => hashRecord("", 1, ev)).toThrow();
  });

  it("JCS refuses values that are not JSON", () => {
    expect(() => jcs({ a: () => 1 })).toThrow(NotCanonicalizableError);
    expect(() => jcs({ a: Symbol("s") })).toThrow(NotCanonicalizableError);
    expect(() => jcs({ a: undefined })).toThrow(NotCanonicalizableError);
    expect(() => jcs({ a: 1n })).toThrow(NotCanonicalizableError);
    expect(() => jcs({ a: "\uD800" })).toThrow(NotCanonicalizableError);
    expect(() => jcs(new Date())).toThrow(NotCanonicalizableError);
  });

  it("JCS follows RFC 8785 number and string rules", () => {
    expect(jcs({ b: -0, a: 1e21, c: 1e-7, d: 4.5, e: "€$\u000f\nA'B\"\\/" })).toBe(
      '{"a":1e+21,"b":0,"c":1e-7,"d":4.5,"e":"€$\\u000f\\nA\'B\\"\\\\/"}',
    );
  });
});
