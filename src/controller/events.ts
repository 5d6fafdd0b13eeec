// Constructors for the events the host journals. Invariant: host-written events carry `ts`;
// lifecycle events carry no execution id; every turn event carries its turn's execution id.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { redactSecrets } from "../errors/index.js";
import {
  EventKind,
  EventSchema,
  Lifecycle_Kind,
  type Event,
  type Message,
  type ModelCall,
  type ToolCall,
  type ToolResult,
  type Usage,
} from "../gen/agentsessions/v1/common_pb.js";

type BodyInit = MessageInitShape<typeof EventSchema>["body"];

export function hostEvent(kind: EventKind, executionId: string, body: BodyInit): Event {
  return create(EventSchema, { kind, executionId, ts: timestampNow(), body });
}

// The one definition of "the text of a message" lives with the models; the controller re-exports it.
export { messageText as textOf, textMessage } from "../model/text.js";

export const ev = {
  executionStart(
    executionId: string,
    init: { inputCount: number; harness: string; harnessVersion: string; config: Uint8Array; resumeFromSeq: number },
  ): Event {
    return hostEvent(EventKind.EVENT_EXECUTION_START, executionId, {
      case: "executionStart",
      value: {
        inputCount: BigInt(init.inputCount),
        harness: init.harness,
        harnessVersion: init.harnessVersion,
        config: init.config,
        resumeFromSeq: BigInt(init.resumeFromSeq),
      },
    });
  },
  input(executionId: string, message: Message): Event {
    return hostEvent(EventKind.EVENT_INPUT, executionId, { case: "message", value: message });
  },
  modelCall(executionId: string, call: ModelCall): Event {
    return hostEvent(EventKind.EVENT_MODEL_CALL, executionId, { case: "model", value: call });
  },
  output(executionId: string, message: Message): Event {
    return hostEvent(EventKind.EVENT_OUTPUT, executionId, { case: "message", value: message });
  },
  toolCall(executionId: string, call: ToolCall): Event {
    return hostEvent(EventKind.EVENT_TOOL_CALL, executionId, { case: "tool", value: call });
  },
  toolResult(executionId: string, result: ToolResult): Event {
    return hostEvent(EventKind.EVENT_TOOL_RESULT, executionId, { case: "result", value: result });
  },
  approvalRequest(executionId: string, toolCallId: string, reason: string): Event {
    return hostEvent(EventKind.EVENT_APPROVAL_REQUEST, executionId, {
      case: "approval",
      value: { toolCallId, reason },
    });
  },
  usage(executionId: string, usage: Usage): Event {
    return hostEvent(EventKind.EVENT_USAGE, executionId, { case: "usage", value: usage });
  },
  end(executionId: string): Event {
    return hostEvent(EventKind.EVENT_END, executionId, { case: "end", value: { state: "COMPLETED" } });
  },
  error(executionId: string, code: number, description: string): Event {
    return hostEvent(EventKind.EVENT_ERROR, executionId, {
      case: "error",
      value: { code, description: redactSecrets(description) },
    });
  },
  lifecycle(
    kind: Lifecycle_Kind,
    init: { detail?: string; snapshotLocal?: string; snapshotExternalUri?: string; snapshotMemory?: boolean } = {},
  ): Event {
    return hostEvent(EventKind.EVENT_LIFECYCLE, "", {
      case: "lifecycle",
      value: {
        kind,
        detail: init.detail ?? "",
        snapshotLocal: init.snapshotLocal ?? "",
        snapshotExternalUri: init.snapshotExternalUri ?? "",
        snapshotMemory: init.snapshotMemory ?? false,
      },
    });
  },
};

export { Lifecycle_Kind };
