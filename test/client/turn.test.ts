// The client's typed turn status, parsed from what a server sent (src/client/turn.ts): a well-formed
// annotation becomes camelCase fields with a bigint seq; anything else is `undefined`, never a throw
// and never a half-read status.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SessionSchema } from "../../src/gen/agentsessions/v1/session_pb.js";
import { turnOf } from "../../src/client/turn.js";
import { TURN_ANNOTATION } from "../../src/wire/annotations.js";

const annotated = (raw: string | undefined) =>
  create(SessionSchema, { annotations: raw === undefined ? {} : { [TURN_ANNOTATION]: raw } });

describe("the client's turn status", () => {
  it("aWellFormedTurnAnnotationIsTypedWithABigintSeq", () => {
    const raw = JSON.stringify({
      status: "awaiting",
      wait: "question",
      next: "answer",
      gate: { execution_id: "e1", tool_call_id: "w1", request_seq: 4 },
      question: { text: "which?", choices: ["a", "b"], allow_free_text: true },
      extra: "ignored",
    });
    expect(turnOf(annotated(raw))).toEqual({
      status: "awaiting",
      wait: "question",
      next: "answer",
      gate: { executionId: "e1", toolCallId: "w1", requestSeq: 4n },
      question: { text: "which?", choices: ["a", "b"], allowFreeText: true },
    });
  });

  it("aMissingOrMalformedTurnAnnotationIsUndefinedNotAThrow", () => {
    for (const raw of [
      undefined,
      "",
      "not json",
      "[]",
      "null",
      JSON.stringify({}),
      JSON.stringify({ status: "parked" }),
      JSON.stringify({ status: "awaiting", wait: "coffee" }),
      JSON.stringify({ status: "decided", approved: "yes" }),
      JSON.stringify({ status: "awaiting", gate: { execution_id: "e", tool_call_id: "w", request_seq: -1 } }),
      JSON.stringify({ status: "awaiting", gate: { execution_id: "e", tool_call_id: "w", request_seq: 1.5 } }),
      JSON.stringify({ status: "awaiting", question: { text: "q", choices: [1], allow_free_text: false } }),
      JSON.stringify({ status: "completed", next: "rm -rf" }),
    ])
      expect(turnOf(annotated(raw)), String(raw)).toBeUndefined();
  });
});
