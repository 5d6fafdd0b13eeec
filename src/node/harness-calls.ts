// The calls a remote harness's turn makes on the host: each Event a node sends becomes one call on
// the host's sink (model, output, tool call and its result, usage) and, for the blocking ones, the
// reply frames the node waits for (docs/protocol.md §4.3, §8.4). Invariants: a turn ends well only on
// END{COMPLETED}; END FAILED or CANCELED, an ERROR, a malformed body or a host-only or unknown kind is
// an error; a decided gate is answered with the decision first, then the tool receipt.
import { create } from "@bufbuild/protobuf";
import { decisionOf } from "../controller/approvals.js";
import { ErrorCode, HostError, errorCodeOfStatus } from "../errors/index.js";
import { type Event, EventKind, type Message } from "../gen/agentsessions/v1/common_pb.js";
import { type ControllerFrame, ControllerFrameSchema } from "../gen/agentsessions/v1/harness_pb.js";
import type { EventSink, ModelRequest } from "../harness/types.js";

/** The frames a call's answer travels in (none for a report), or "end" on END COMPLETED. */
export type CallReply = ControllerFrame["frame"][] | "end";

/** END{FAILED|CANCELED} from a node: the harness's own failure, with the node's description. */
export class RemoteTurnError extends HostError {
  readonly state: string;
  readonly grpcCode: number;
  constructor(state: string, grpcCode: number, description: string) {
    super(
      grpcCode !== 0 ? errorCodeOfStatus(grpcCode) : state === "CANCELED" ? ErrorCode.Cancelled : ErrorCode.Internal,
      description,
    );
    this.state = state;
    this.grpcCode = grpcCode;
  }
}

/** Acts on one event; returns the reply frames for blocking calls, or "end" on END COMPLETED. */
export async function callHost(event: Event, sink: EventSink, signal: AbortSignal): Promise<CallReply> {
  const { kind, body } = event;
  switch (kind) {
    case EventKind.EVENT_MODEL_CALL:
      if (body.case !== "model") throw malformed(kind);
      return modelCall(body.value, sink, signal);
    case EventKind.EVENT_OUTPUT:
      if (body.case !== "message") throw malformed(kind);
      await sink.output(textOf(body.value), signal);
      return [];
    case EventKind.EVENT_TOOL_CALL:
      if (body.case !== "tool") throw malformed(kind);
      return toolCall(body.value, sink, signal);
    case EventKind.EVENT_TOOL_RESULT:
      if (body.case !== "result") throw malformed(kind);
      await sink.report(body.value, signal);
      return [];
    case EventKind.EVENT_USAGE:
      if (body.case !== "usage") throw malformed(kind);
      await sink.usage(body.value, signal);
      return [];
    case EventKind.EVENT_END:
      if (body.case !== "end") throw malformed(kind);
      if (body.value.state === "COMPLETED") return "end";
      throw new RemoteTurnError(
        body.value.state,
        body.value.error?.code ?? 0,
        body.value.error?.description || `harness ended the turn ${body.value.state || "without a state"}`,
      );
    case EventKind.EVENT_ERROR:
      throw reportedError(body.case === "error" ? body.value : undefined);
    case EventKind.EVENT_INPUT:
    case EventKind.EVENT_APPROVAL_REQUEST:
    case EventKind.EVENT_APPROVAL_RESULT:
    case EventKind.EVENT_LIFECYCLE:
    case EventKind.EVENT_EXECUTION_START:
    case EventKind.EVENT_PARKED:
      throw new HostError(ErrorCode.Internal, `harness emitted host-only event kind ${EventKind[kind]}`);
    case EventKind.EVENT_KIND_UNSPECIFIED:
      throw new HostError(ErrorCode.Internal, "harness emitted an event without a kind");
    default: {
      const unknown: never = kind;
      throw new HostError(ErrorCode.Internal, `harness emitted unknown event kind ${String(unknown)}`);
    }
  }
}

type ModelCallBody = Extract<Event["body"], { case: "model" }>["value"];
type ToolCallBody = Extract<Event["body"], { case: "tool" }>["value"];
type ErrorBody = Extract<Event["body"], { case: "error" }>["value"];

async function modelCall(mc: ModelCallBody, sink: EventSink, signal: AbortSignal): Promise<CallReply> {
  const request: ModelRequest = {
    model: mc.model,
    params: mc.params,
    messages: mc.messages,
    tools: mc.tools,
    ...(mc.toolChoice !== undefined ? { toolChoice: mc.toolChoice } : {}),
  };
  const response = await sink.model(request, signal);
  const value = create(ControllerFrameSchema, {
    frame: {
      case: "model",
      value: {
        message: response.message,
        modelCallId: mc.id,
        ...(response.usage !== undefined ? { usage: response.usage } : {}),
      },
    },
  }).frame;
  return [value];
}

async function toolCall(call: ToolCallBody, sink: EventSink, signal: AbortSignal): Promise<CallReply> {
  const result = await sink.toolCall(call, signal);
  const tool = create(ControllerFrameSchema, { frame: { case: "tool", value: result } }).frame;
  const decision = decisionOf(result);
  if (decision === undefined) return [tool];
  // A decided gate: the decision first, then the receipt (wire-contract §8.4 step 6).
  const approval = create(ControllerFrameSchema, {
    frame: {
      case: "approval",
      value: {
        toolCallId: decision.toolCallId,
        approved: decision.approved,
        reason: decision.reason,
        requestSeq: BigInt(decision.requestSeq),
      },
    },
  }).frame;
  return [approval, tool];
}

function reportedError(error: ErrorBody | undefined): HostError {
  const code = error?.code ?? 0;
  return new HostError(
    code !== 0 ? errorCodeOfStatus(code) : ErrorCode.Internal,
    `remote harness reported an error: ${error?.description ?? "(no description)"}`,
  );
}

/** The text parts of a message, concatenated (non-text parts do not travel as OUTPUT text). */
function textOf(message: Message): string {
  let text = "";
  for (const p of message.parts) if (p.part.case === "text") text += p.part.value.text;
  return text;
}

function malformed(kind: EventKind): HostError {
  return new HostError(ErrorCode.Internal, `harness sent a malformed ${EventKind[kind]} event`);
}
