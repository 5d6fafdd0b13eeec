// The live sink: every harness effect is journaled as it happens, and model calls go through the
// host's provider. Invariants: MODEL_CALL (with its input hash) is durable before the provider is
// invoked and OUTPUT right after it (I0, I2: the completion message is stored verbatim); a mediated
// TOOL_CALL is durable before the executor runs (I3); a REQUIRES_APPROVAL call commits TOOL_CALL and
// the host-owned APPROVAL_REQUEST together, then parks the turn (sticky ApprovalParkedError); a
// decided gate's receipt runs the executor at most once and never on a denial; a harness-reported
// TOOL_RESULT rides the turn's next commit, so it is durable before the next effect the host makes.
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
import { modelInputHashIn } from "../canon/index.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { EventSink, ModelRequest, ModelResponse } from "../harness/types.js";
import { ApprovalParkedError, attachDecision, deniedReceipt } from "./approvals.js";
import { ev, textMessage, textOf } from "./events.js";
import { newCallId } from "./ids.js";
import { callSignal, type SinkGuard } from "./sink-guard.js";
import { answerOf, askCall, ASK_TOOL, questionOf } from "./questions.js";
import { checkToolPolicy } from "./tool-policy.js";
import { validateMediatedCall } from "./tools.js";
import { compactionMessage } from "../projection/compaction.js";
import { hostParamsOf, providerRequest } from "./host-params.js";
import { withRetry } from "../model/retry.js";
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

/**
 * The request's model-input hash in the form the turn's execution was written with; Diverged when
 * that form cannot be reproduced for this request (the Go form of a request offering tools).
 */
export function inputHashOf(ctx: TurnContext, request: ModelRequest): string {
  const hash = modelInputHashIn(ctx.inputHashForm, modelCallOf(request));
  if (hash === undefined)
    throw new HostError(
      ErrorCode.Diverged,
      `execution ${ctx.executionId} was written by the Go host, whose input hash of a request offering tools or tool-call parts this host cannot reproduce`,
    );
  return hash;
}

/** Effects that write to the journal live; shared by the live sink and resume's live tail. */
export class LiveEffects {
  constructor(private readonly ctx: TurnContext) {}

  async model(request: ModelRequest, signal: AbortSignal): Promise<ModelResponse> {
    const hash = inputHashOf(this.ctx, request);
    compactionRange(this.ctx, hostParamsOf(request).compact);
    await this.ctx.append(
      ev.modelCall(
        this.ctx.executionId,
        create(ModelCallSchema, {
          model: request.model,
          params: { ...(request.params ?? {}) },
          inputHash: hash,
          id: newCallId(),
        }),
      ),
    );
    return this.invokeAndRecord(request, signal);
  }

  /**
   * Invokes the provider and records its completion as OUTPUT (also the resume model cut). A request
   * with `harnesshost.model_attempts` is attempted that many times at most, retrying expected failures
   * only, with backoff; a compaction request's completion is recorded as the compaction record (§16).
   */
  async invokeAndRecord(request: ModelRequest, signal: AbortSignal): Promise<ModelResponse> {
    const { deps, executionId } = this.ctx;
    const params = hostParamsOf(request);
    const range = compactionRange(this.ctx, params.compact);
    const forProvider = providerRequest(request);
    // A summary is the host's business, not the client's: no deltas for a compaction call.
    const onDelta = range ? undefined : deps.observer?.onDelta;
    // The newest chunk is held back until the next one arrives or the call ends, so the stream's last
    // chunk carries `done` itself instead of costing the client one more message.
    let held: string | undefined;
    const once = (maxAttempts?: number): Promise<ModelResponse> => {
      if (deps.modelCalls) deps.modelCalls.count++;
      return deps.model.invoke(forProvider, {
        signal,
        ...(maxAttempts !== undefined ? { maxAttempts } : {}),
        ...(onDelta
          ? {
              onDelta: (chunk: string) => {
                if (held !== undefined) onDelta(executionId, held, false);
                held = chunk;
              },
            }
          : {}),
      });
    };
    let response: ModelResponse;
    try {
      response =
        params.attempts === undefined
          ? await once()
          : await withRetry(
              () => once(1),
              {
                maxAttempts: params.attempts,
                ...(params.backoffMs !== undefined ? { initialBackoffMs: params.backoffMs } : {}),
              },
              signal,
            );
    } catch (err) {
      if (held !== undefined) onDelta?.(executionId, held, false);
      throw err;
    }
    onDelta?.(executionId, held ?? "", true);
    if (range) {
      const summary = textOf(response.message);
      this.ctx.defer(
        ev.output(
          executionId,
          compactionMessage({ summary, ...range, inputHash: inputHashOf(this.ctx, request), model: request.model }),
        ),
      );
      // What the harness gets is what replay serves from the record: the summary as assistant text.
      return { message: textMessage("assistant", summary), ...(response.usage ? { usage: response.usage } : {}) };
    }
    this.ctx.defer(ev.output(executionId, response.message));
    this.ctx.noteOutput(textOf(response.message));
    return response;
  }

  async output(text: string): Promise<void> {
    // Harness text is committed at once: a client following the Exec stream sees it while the turn
    // goes on (a model completion instead rides the next commit; its deltas already streamed).
    await this.ctx.append(ev.output(this.ctx.executionId, textMessage("assistant", text)));
    this.ctx.noteOutput(text);
  }

  async toolCall(call: ToolCall, signal: AbortSignal): Promise<ToolResult> {
    validateMediatedCall(call);
    if (call.mediation === Mediation.REQUIRES_APPROVAL) return this.gate(call, false);
    checkToolPolicy(this.ctx.deps.toolPolicy, call);
    const executor = this.ctx.deps.tools;
    if (!executor)
      throw new HostError(
        ErrorCode.FailedPrecondition,
        `no tool executor is configured for controller-mediated tool "${call.tool}"`,
      );
    await this.ctx.append(ev.toolCall(this.ctx.executionId, call));
    return this.execute(call, signal);
  }

  /** Runs the executor for a recorded intent and records the receipt (also the resume tool cut). */
  async execute(call: ToolCall, signal: AbortSignal): Promise<ToolResult> {
    // A recorded intent re-driven by Resume obeys today's policy too (e.g. one recorded before it).
    checkToolPolicy(this.ctx.deps.toolPolicy, call);
    const executor = this.ctx.deps.tools;
    if (!executor)
      throw new HostError(
        ErrorCode.FailedPrecondition,
        `no tool executor is configured for controller-mediated tool "${call.tool}"`,
      );
    let result: ToolResult;
    try {
      result = create(ToolResultSchema, await executor.execute(call, { sessionUid: this.ctx.session, signal }));
    } catch (err) {
      if (signal.aborted) throw err;
      result = create(ToolResultSchema, {
        isError: true,
        code: ToolResult_Code.EXECUTOR_ERROR,
        error: err instanceof Error ? err.message : String(err),
      });
    }
    result.id = call.id;
    await this.ctx.append(ev.toolResult(this.ctx.executionId, result));
    return result;
  }

  /**
   * Commits the gate (TOOL_CALL unless already recorded, then APPROVAL_REQUEST) and parks. Nothing is
   * appended when the call is invalid, its id reused in this turn, or parking is refused.
   */
  async gate(call: ToolCall, intentRecorded: boolean): Promise<never> {
    const { executionId } = this.ctx;
    if (!intentRecorded) {
      validateMediatedCall(call);
      if (this.ctx.gatedIds.has(call.id))
        throw new HostError(
          ErrorCode.InvalidArgument,
          `gated tool call id ${JSON.stringify(call.id)} is reused in this execution`,
        );
    }
    await this.ctx.requireParking();
    const reason = call.tool === ASK_TOOL ? questionOf(call).question : `tool "${call.tool}" requires approval`;
    const events = [
      ...(intentRecorded ? [] : [ev.toolCall(executionId, call)]),
      ev.approvalRequest(executionId, call.id, reason),
    ];
    const recs = await this.ctx.appendBatch(events);
    this.ctx.gatedIds.add(call.id);
    throw new ApprovalParkedError({ executionId, toolCallId: call.id, requestSeq: recs.at(-1)!.seq });
  }

  /**
   * The receipt of a decided gate: denied → APPROVAL_DENIED without running anything; an answered
   * question → its answer; approved → the executor, once, with the recorded idempotency key. A
   * missing executor is FAILED_PRECONDITION with nothing appended (the decision stays recoverable).
   */
  async completeGate(
    call: ToolCall,
    requestSeq: number,
    decision: { seq: number; approved: boolean; reason: string },
    signal: AbortSignal,
  ): Promise<ToolResult> {
    let result: ToolResult;
    if (!decision.approved) {
      result = deniedReceipt(call.id, requestSeq, decision.seq);
    } else if (call.tool === ASK_TOOL) {
      result = create(ToolResultSchema, {
        id: call.id,
        output: { answer: decision.reason },
        content: [{ part: { case: "text", value: { text: decision.reason } } }],
      });
    } else {
      const executor = this.ctx.deps.tools;
      if (!executor)
        throw new HostError(
          ErrorCode.FailedPrecondition,
          `no tool executor is configured for approved tool "${call.tool}"; the decision stays recorded — configure one and resume`,
        );
      try {
        result = create(ToolResultSchema, await executor.execute(call, { sessionUid: this.ctx.session, signal }));
        if (result.isError) result.code = ToolResult_Code.EXECUTOR_ERROR;
        else result.code = ToolResult_Code.CODE_UNSPECIFIED;
      } catch (err) {
        if (signal.aborted) throw err;
        result = create(ToolResultSchema, {
          isError: true,
          code: ToolResult_Code.EXECUTOR_ERROR,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
    result.id = call.id;
    result.approvalRequestSeq = BigInt(requestSeq);
    result.approvalDecisionSeq = BigInt(decision.seq);
    await this.ctx.append(ev.toolResult(this.ctx.executionId, result));
    return attachDecision(result, {
      toolCallId: call.id,
      approved: decision.approved,
      reason: decision.reason,
      requestSeq,
    });
  }

  async report(result: ToolResult): Promise<void> {
    if (
      result.code === ToolResult_Code.APPROVAL_DENIED ||
      result.approvalRequestSeq !== 0n ||
      result.approvalDecisionSeq !== 0n
    ) {
      throw new HostError(ErrorCode.InvalidArgument, "a reported tool result cannot carry approval fields");
    }
    // The tool already ran in the harness: its result has no effect outside the journal, so it rides
    // the turn's next commit — at the latest the write-ahead of the next model call or host tool, the
    // next harness text, or END/ERROR — and saves a sync per harness-local tool (§5.4).
    this.ctx.defer(ev.toolResult(this.ctx.executionId, result));
  }

  async usage(usage: Usage): Promise<void> {
    this.ctx.defer(ev.usage(this.ctx.executionId, usage));
  }
}

/**
 * The seq range a compaction call replaces: the first `count` events of the turn's Start.history, i.e.
 * seqs historyBase+1 … historyBase+count (INVALID_ARGUMENT when the history holds fewer).
 */
export function compactionRange(
  ctx: TurnContext,
  count: number | undefined,
): { fromSeq: number; throughSeq: number } | undefined {
  if (count === undefined) return undefined;
  if (count > ctx.historyCount)
    throw new HostError(
      ErrorCode.InvalidArgument,
      `a compaction may replace at most the ${ctx.historyCount} events of the turn's history, not ${count}`,
    );
  return { fromSeq: ctx.historyBase + 1, throughSeq: ctx.historyBase + count };
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
    ask: (req, s) => {
      const signal = sig(s);
      return guard.run(
        async () => answerOf(await live.toolCall(askCall(ctx.executionId, ctx.nextAskIndex(), req), signal)),
        signal,
      );
    },
    emit: (effect) => emitInto(ctx, effect),
  };
}

/** Queues an effect for the turn's next commit (INVALID_ARGUMENT on a bad payload). */
export function emitInto(ctx: TurnContext, effect: Parameters<NonNullable<EventSink["emit"]>>[0]): void {
  const batch = ctx.deps.effects;
  if (!batch)
    throw new HostError(ErrorCode.FailedPrecondition, `effect ${effect.key}: this host has no effect registry`);
  batch.emit(effect);
}
