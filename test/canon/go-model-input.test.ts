// The reference's (Go) model-input hash form (docs/migrating-from-go.md). Vectors: the literal hashes in the
// reference's api/approval_test.go (tool-result receipt), controller/inputhash_compat_test.go
// (legacyRequest: file bytes, a Data float, a reasoning summary, params) and the MODEL_CALL input
// hashes the Go host recorded in its controller/testdata/v0.1.2 journals (echo "hello" and "new").
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { goModelInputHash, goModelInputJson, goString } from "../../src/canon/go-model-input.js";
import { GO_WRITTEN_THROUGH_ANNOTATION, inputHashFormOf, modelInputHashIn } from "../../src/canon/index.js";
import { ModelCallSchema } from "../../src/gen/agentsessions/v1/common_pb.js";

const text = (role: string, t: string) => ({ role, parts: [{ part: { case: "text" as const, value: { text: t } } }] });

describe("Go model-input hash form", () => {
  it("reproduces the Go host's recorded echo input hashes", () => {
    const hello = create(ModelCallSchema, { model: "echo", messages: [text("user", "hello")] });
    expect(goModelInputJson(hello)).toBe(
      '{"Model":"echo","Messages":[{"Role":"user","Parts":[{"Text":{"Text":"hello"},"File":null,"Data":null,"Reasoning":null}]}],"Params":null}',
    );
    expect(goModelInputHash(hello)).toBe("2611c24a1a665deca46265ed96d1e1efc699260c9cba9c07f22cda7939232c30");
    expect(goModelInputHash(create(ModelCallSchema, { model: "echo", messages: [text("user", "new")] }))).toBe(
      "403e89a947b27e8d1ce3838a7481b8fc33e51c0e03489bdb745ceab8b02f260d",
    );
  });

  it("reproduces the tool-result receipt vector (transient approval never encoded)", () => {
    const req = create(ModelCallSchema, {
      model: "m",
      messages: [{ role: "tool", parts: [{ part: { case: "toolResult", value: { id: "c1" } } }] }],
    });
    expect(goModelInputHash(req)).toBe("e519b8f957d02755a004b638c9d819f925e8bb9b65fa06a71bfd4f121b95472a");
  });

  it("reproduces the legacy request vector (file bytes, data float, reasoning summary, params)", () => {
    const req = create(ModelCallSchema, {
      model: "m",
      params: { temperature: "0" },
      messages: [
        text("system", "be brief"),
        {
          role: "user",
          parts: [
            { part: { case: "text", value: { text: "hi" } } },
            {
              part: {
                case: "file",
                value: {
                  mime: "image/png",
                  source: { case: "bytes", value: new Uint8Array([1, 2]) },
                  name: "img",
                  digest: "sha256:aa",
                },
              },
            },
            { part: { case: "data", value: { data: { b: 1.5, a: "x" } } } },
          ],
        },
        {
          role: "assistant",
          parts: [
            {
              part: {
                case: "reasoning",
                value: {
                  provider: "p",
                  modelId: "m",
                  opaque: { case: "opaqueBytes", value: new TextEncoder().encode("r") },
                  itemId: "rs_1",
                  ordinal: 1,
                  summary: [{ part: { case: "text", value: { text: "brief" } } }],
                },
              },
            },
            { part: { case: "text", value: { text: "yo" } } },
          ],
        },
      ],
    });
    expect(goModelInputHash(req)).toBe("210636379d42235ed6d7b2b1e9c7d7e59c8f887a851ec502ac50f82e36867256");
  });

  it("escapes strings as Go encoding/json does (HTML-safe, U+2028/9, controls)", () => {
    expect(goString('<a & "b">\u2028\u2029\n\u0001é/')).toBe(
      '"\\u003ca \\u0026 \\"b\\"\\u003e\\u2028\\u2029\\n\\u0001é/"',
    );
  });

  it("refuses (undefined) request shapes the reference's vectors do not pin: tools, tool choice, tool-call parts", () => {
    expect(goModelInputHash(create(ModelCallSchema, { model: "m", tools: [{ name: "t" }] }))).toBeUndefined();
    expect(
      goModelInputHash(
        create(ModelCallSchema, {
          model: "m",
          messages: [{ role: "assistant", parts: [{ part: { case: "toolCall", value: { id: "c1", tool: "t" } } }] }],
        }),
      ),
    ).toBeUndefined();
  });

  it("the hash form is the recorded import boundary: Go through its seq, ours after", () => {
    const annotations = { [GO_WRITTEN_THROUGH_ANNOTATION]: "5" };
    expect(inputHashFormOf(annotations, 1)).toBe("go");
    expect(inputHashFormOf(annotations, 5)).toBe("go");
    expect(inputHashFormOf(annotations, 6)).toBe("harnesshost");
    expect(inputHashFormOf({}, 1)).toBe("harnesshost");
    const req = create(ModelCallSchema, { model: "echo", messages: [text("user", "hello")] });
    expect(modelInputHashIn("go", req)).not.toBe(modelInputHashIn("harnesshost", req));
  });
});
