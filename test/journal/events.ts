// Event builders shared by the journal tests: small, realistic turn events of several kinds.
import { create } from "@bufbuild/protobuf";
import type { JsonObject } from "@bufbuild/protobuf";
import {
  EventKind,
  EventSchema,
  Lifecycle_Kind,
  Mediation,
  type Event,
} from "../../src/gen/agentsessions/v1/common_pb.js";

export function inputEvent(text: string, executionId = "e1"): Event {
  return create(EventSchema, {
    executionId,
    kind: EventKind.EVENT_INPUT,
    body: { case: "message", value: { role: "user", parts: [{ part: { case: "text", value: { text } } }] } },
  });
}

export function outputEvent(text: string, executionId = "e1"): Event {
  return create(EventSchema, {
    executionId,
    kind: EventKind.EVENT_OUTPUT,
    body: { case: "message", value: { role: "assistant", parts: [{ part: { case: "text", value: { text } } }] } },
  });
}

export function toolCallEvent(id: string, args: JsonObject, executionId = "e1"): Event {
  return create(EventSchema, {
    executionId,
    kind: EventKind.EVENT_TOOL_CALL,
    body: {
      case: "tool",
      value: { id, tool: "weather", args, mediation: Mediation.CONTROLLER_MEDIATED, idempotencyKey: `k-${id}` },
    },
  });
}

export function approvalRequestEvent(toolCallId: string, executionId = "e1"): Event {
  return create(EventSchema, {
    executionId,
    kind: EventKind.EVENT_APPROVAL_REQUEST,
    body: { case: "approval", value: { toolCallId, reason: "needs a human" } },
  });
}

export function approvalResultEvent(toolCallId: string, approved: boolean, executionId = "e1"): Event {
  return create(EventSchema, {
    executionId,
    kind: EventKind.EVENT_APPROVAL_RESULT,
    body: { case: "approvalResult", value: { toolCallId, approved, reason: approved ? "ok" : "no", requestSeq: 3n } },
  });
}

export function lifecycleEvent(kind: Lifecycle_Kind, detail = ""): Event {
  return create(EventSchema, { kind: EventKind.EVENT_LIFECYCLE, body: { case: "lifecycle", value: { kind, detail } } });
}

export function endEvent(executionId = "e1"): Event {
  return create(EventSchema, {
    executionId,
    kind: EventKind.EVENT_END,
    body: { case: "end", value: { state: "COMPLETED" } },
  });
}

/** An event whose Struct holds NaN: it has no canonical form, so appending it must fail cleanly. */
export function unhashableEvent(): Event {
  return toolCallEvent("bad", { x: Number.NaN });
}

/** An EXECUTION_START of `harness` at `version` (what pins a session, src/journal/pin.ts). */
export function executionStartEvent(harness: string, version: string, executionId = "e1", inputCount = 0): Event {
  return create(EventSchema, {
    executionId,
    kind: EventKind.EVENT_EXECUTION_START,
    body: { case: "executionStart", value: { harness, harnessVersion: version, inputCount: BigInt(inputCount) } },
  });
}

/** One completed echo-shaped turn: EXECUTION_START, its INPUT `text`, an OUTPUT `echo:<text>`, END. */
export function completedTurnEvents(executionId: string, text: string): Event[] {
  return [
    executionStartEvent("echo", "1", executionId, 1),
    inputEvent(text, executionId),
    outputEvent(`echo:${text}`, executionId),
    endEvent(executionId),
  ];
}

/** The host's upgrade record (docs/versioning.md): moves the pin to `to`. */
export function upgradeRecordEvent(harness: string, from: string, to: string): Event {
  const detail = `harness-upgrade:${JSON.stringify({ harness, from, to })}`;
  return create(EventSchema, {
    kind: EventKind.EVENT_LIFECYCLE,
    body: { case: "lifecycle", value: { kind: Lifecycle_Kind.LIFECYCLE_BASELINE, detail } },
  });
}
