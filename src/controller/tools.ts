// The host's tool-executor seam for CONTROLLER_MEDIATED calls (invariant I3). Invariant: nothing is
// recorded for a call that lacks an idempotency key or whose arguments are not JSON-safe; the intent
// (TOOL_CALL) is durable before the executor runs.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ToolCall, ToolResultSchema } from "../gen/agentsessions/v1/common_pb.js";
import { Mediation } from "../gen/agentsessions/v1/common_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";

export interface ToolCallContext {
  /** Executors de-duplicate on (sessionUid, idempotencyKey) for exactly-once effects. */
  readonly sessionUid: string;
  readonly signal: AbortSignal;
}

export interface ToolExecutor {
  execute(call: ToolCall, ctx: ToolCallContext): Promise<MessageInitShape<typeof ToolResultSchema>>;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function checkJsonSafe(value: unknown, path: string): void {
  if (value === null || typeof value === "boolean") return;
  if (typeof value === "string") {
    if (!value.isWellFormed())
      throw new HostError(ErrorCode.InvalidArgument, `tool arguments: ${path} is not valid UTF-16/UTF-8 text`);
    return;
  }
  if (typeof value === "number") {
    if (!Number.isFinite(value))
      throw new HostError(ErrorCode.InvalidArgument, `tool arguments: ${path} is not a finite number`);
    if (Number.isInteger(value) && Math.abs(value) > MAX_SAFE) {
      throw new HostError(ErrorCode.InvalidArgument, `tool arguments: ${path} is an integer beyond ±(2^53−1)`);
    }
    return;
  }
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) checkJsonSafe(v, `${path}[${i}]`);
    return;
  }
  if (typeof value === "object") {
    for (const [k, v] of Object.entries(value)) checkJsonSafe(v, `${path}.${k}`);
    return;
  }
  throw new HostError(ErrorCode.InvalidArgument, `tool arguments: ${path} is not JSON-shaped`);
}

/** Validates a controller-mediated call before anything is recorded. */
export function validateMediatedCall(call: ToolCall): void {
  if (call.mediation !== Mediation.CONTROLLER_MEDIATED && call.mediation !== Mediation.REQUIRES_APPROVAL) {
    throw new HostError(
      ErrorCode.InvalidArgument,
      "toolCall is for CONTROLLER_MEDIATED or REQUIRES_APPROVAL tools; report IN_HARNESS_REPORTED results with report()",
    );
  }
  if (call.id === "") throw new HostError(ErrorCode.InvalidArgument, "tool call needs an id");
  if (call.tool === "") throw new HostError(ErrorCode.InvalidArgument, "tool call needs a tool name");
  if (call.idempotencyKey === "") {
    throw new HostError(ErrorCode.InvalidArgument, "a host-executed tool call needs an idempotency key (invariant I3)");
  }
  if (call.args) checkJsonSafe(call.args, "args");
}
