// A realistic multi-turn session for export and cross-language verification: several event kinds,
// Struct floats, int64 beyond 2^53, bytes, a nanosecond timestamp, and awkward unicode text.
import { create } from "@bufbuild/protobuf";
import { EventKind, EventSchema, Lifecycle_Kind, type Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { Journal } from "../../src/journal/types.js";
import { approvalRequestEvent, endEvent, inputEvent, lifecycleEvent, outputEvent, toolCallEvent } from "./events.js";
import { created } from "./sessions.js";

export const AWKWARD_TEXT = 'héllo 😀 — "quoted" \\ back <tag>&amp; line\nsep\u2028ctl\u0001\u007f tab\t';

export function multiTurnEvents(): Event[] {
  return [
    create(EventSchema, {
      executionId: "0123456789abcdef",
      kind: EventKind.EVENT_EXECUTION_START,
      body: {
        case: "executionStart",
        value: {
          config: new Uint8Array([0, 255, 32, 10, 9]),
          resumeFromSeq: 9_007_199_254_740_993n,
          inputCount: 1n,
          harness: "chat",
        },
      },
    }),
    inputEvent(AWKWARD_TEXT, "0123456789abcdef"),
    create(EventSchema, {
      executionId: "0123456789abcdef",
      kind: EventKind.EVENT_MODEL_CALL,
      body: {
        case: "model",
        value: {
          model: "gpt-x",
          params: { temperature: "0.2", "z-last": "1" },
          inputHash: "ab".repeat(32),
          id: "fedcba9876543210",
        },
      },
    }),
    toolCallEvent(
      "call-1",
      {
        city: "São Paulo",
        days: 2,
        ratio: 1.5,
        tiny: 1e-7,
        huge: 1e21,
        third: 1 / 3,
        negZero: -0,
        big: 123456789012345680000,
        list: [0.1, true, null, "x"],
        nested: { "\u{1F600}": "emoji key", "\uFFFD": "replacement key", a: { b: [] } },
      },
      "0123456789abcdef",
    ),
    create(EventSchema, {
      executionId: "0123456789abcdef",
      kind: EventKind.EVENT_TOOL_RESULT,
      body: {
        case: "result",
        value: {
          id: "call-1",
          output: { tempC: 21.25, summary: "ensoleillé ☀" },
          approvalRequestSeq: 9_007_199_254_740_994n,
        },
      },
    }),
    create(EventSchema, {
      executionId: "0123456789abcdef",
      kind: EventKind.EVENT_USAGE,
      body: { case: "usage", value: { model: "gpt-x", inputTokens: 1200n, outputTokens: 34n } },
    }),
    outputEvent("It is 21.25 °C in São Paulo.", "0123456789abcdef"),
    endEvent("0123456789abcdef"),
    approvalRequestEvent("call-2", "1111111111111111"),
    create(EventSchema, {
      executionId: "1111111111111111",
      kind: EventKind.EVENT_APPROVAL_RESULT,
      ts: { seconds: 1_700_000_000n, nanos: 123_456_789 },
      actor: { principal: "human:alice" },
      body: {
        case: "approvalResult",
        value: { toolCallId: "call-2", approved: false, reason: "nope", requestSeq: 9n },
      },
    }),
    lifecycleEvent(Lifecycle_Kind.LIFECYCLE_SUSPEND, "idle"),
  ];
}

/** Appends the multi-turn session to `session` and returns the number of records. */
export async function writeMultiTurn(journal: Journal, session: string): Promise<number> {
  const events = multiTurnEvents();
  await created(journal, session);
  await journal.appendBatch(session, 0, 0, events);
  return events.length;
}
