// The live sink: every harness effect is journaled as it happens, and model calls go through the
// host's provider. Invariants: MODEL_CALL (with its input hash) is durable before the provider is
// invoked and OUTPUT right after it (I0, I2: the completion message is stored verbatim); a mediated
// TOOL_CALL is durable before the executor runs (I3).
import { create } from "@bufbuild/protobuf";
import {
  ModelCallSchema,
  ToolResultSchema,
  ToolResult_Code,
  type ToolCall,
  type ToolResult,
  type Usage,
} from "../gen/agentsessions/v1/common_pb.js";
import { Mediation } from "../gen/agentsessions/v1/common_pb.js";
import { modelInputHash } from "../canon/index.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { EventSink, ModelRequest, ModelResponse } from "../sdk/types.js";
import { ev, textMessage, textOf } from "./events.js";
import { newCallId } from "./ids.js";
import { callSignal, SinkGuard } from "./sink-guard.js";
import { validateMediatedCall } from "./tools.js";
import type { TurnContext } from "./turn-context.js";

export function modelCallOf(request: ModelRequest): ReturnType<typeof create<typeof ModelCallSchema>> {
  return create(ModelCallSchema, {
    model: request.model,
    params: { ...(request.params ?? {}) },
    messages: [...request.messages],
    tools: [...(request.tools ?? [])],
    toolChoice: request.toolChoice,
  });
}

/** Effects that write to the journal live; shared by the live sink and resume's live tail. */
export class LiveEffects {
  constructor(private readonly ctx: TurnContext) {}

  async model(request: ModelRequest, signal: AbortSignal): Promise<ModelResponse> {
    const hash = modelInputHash(modelCallOf(request));
    await this.ctx.append(
      ev.modelCall(this.ctx.executionId, create(ModelCallSchema, { model: request.model, params: { ...(request.params ?? {}) }, inputHash: hash, id: newCallId() })),
    );
    return this.invokeAndRecord(request, signal);
  }

  /** Invokes the provider once and records its completion as OUTPUT (also the resume model cut). */
  async invokeAndRecord(request: ModelRequest, signal: AbortSignal): Promise<ModelResponse> {
    const { deps, executionId } = this.ctx;
    if (deps.modelCalls) deps.modelCalls.count++;
    const onDelta = deps.observer?.onDelta;
    const response = await deps.model.invoke(request, {
      signal,
      ...(onDelta ? { onDelta: (chunk: string) => onDelta(executionId, chunk, false) } : {}),
    });
    onDelta?.(executionId, "", true);
    await this.ctx.append(ev.output(executionId, response.message));
    this.ctx.noteOutput(textOf(response.message));
    return response;
  }

  async output(text: string): Promise<void> {
    await this.ctx.append(ev.output(this.ctx.executionId, textMessage("assistant", text)));
    this.ctx.noteOutput(text);
  }

  async toolCall(call: ToolCall, signal: AbortSignal): Promise<ToolResult> {
    validateMediatedCall(call);
    if (call.mediation === Mediation.REQUIRES_APPROVAL) {
      throw new HostError(ErrorCode.FailedPrecondition, "REQUIRES_APPROVAL tool calls need the approval gate, which this host does not provide yet");
    }
    const executor = this.ctx.deps.tools;
    if (!executor) throw new HostError(ErrorCode.FailedPrecondition, `no tool executor is configured for controller-mediated tool "${call.tool}"`);
    await this.ctx.append(ev.toolCall(this.ctx.executionId, call));
    return this.execute(call, signal);
  }

  /** Runs the executor for a recorded intent and records the receipt (also the resume tool cut). */
  async execute(call: ToolCall, signal: AbortSignal): Promise<ToolResult> {
    const executor = this.ctx.deps.tools;
    if (!executor) throw new HostError(ErrorCode.FailedPrecondition, `no tool executor is configured for controller-mediated tool "${call.tool}"`);
    let result: ToolResult;
    try {
      result = create(ToolResultSchema, await executor.execute(call, { sessionUid: this.ctx.session, signal }));
    } catch (err) {
      if (signal.aborted) throw err;
      result = create(ToolResultSchema, { isError: true, code: ToolResult_Code.EXECUTOR_ERROR, error: err instanceof Error ? err.message : String(err) });
    }
    result.id = call.id;
    await this.ctx.append(ev.toolResult(this.ctx.executionId, result));
    return result;
  }

  async report(result: ToolResult): Promise<void> {
    if (result.code === ToolResult_Code.APPROVAL_DENIED || result.approvalRequestSeq !== 0n || result.approvalDecisionSeq !== 0n) {
      throw new HostError(ErrorCode.InvalidArgument, "a reported tool result cannot carry approval fields");
    }
    await this.ctx.append(ev.toolResult(this.ctx.executionId, result));
  }

  async usage(usage: Usage): Promise<void> {
    await this.ctx.append(ev.usage(this.ctx.executionId, usage));
  }
}

export function liveSink(ctx: TurnContext, guard: SinkGuard): EventSink {
  const live = new LiveEffects(ctx);
  const sig = (s?: AbortSignal) => callSignal(s, ctx.signal);
  return {
    model: (req, s) => {
      const signal = sig(s);
      return guard.run(() => live.model(req, signal), signal);
    },
    toolCall: (call, s) => {
      const signal = sig(s);
      return guard.run(() => live.toolCall(call, signal), signal);
    },
    output: (text, s) => guard.run(() => live.output(text), sig(s)),
    report: (result, s) => guard.run(() => live.report(result), sig(s)),
    usage: (u, s) => guard.run(() => live.usage(u), sig(s)),
  };
}
