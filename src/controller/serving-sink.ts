// The serving sink: answers a harness from a turn's recorded effects, in order, without invoking
// anything. Invariants: I0 (a model request must hash to the recorded input hash), I1 (the provider
// is never called while recorded effects remain), I2 (recorded completions, reasoning parts included,
// are served verbatim), I5 (nothing is appended while serving). In resume mode, a trailing MODEL_CALL
// without OUTPUT is invoked exactly once, a trailing TOOL_CALL without result is re-executed with its
// recorded key, and then the turn continues live. A gated call (REQUIRES_APPROVAL) is served from its
// recorded receipt; with a decision but no receipt, resume completes it (executor at most once, never
// on a denial); with no decision the turn parks again without appending anything.
import { clipForLog } from "../obs/op-log.js";
import { toJson } from "@bufbuild/protobuf";
import {
  EventKind,
  Mediation,
  type Event,
  type ToolCall,
  type ToolResult,
  type Usage,
  UsageSchema,
} from "../gen/agentsessions/v1/common_pb.js";
import { jcs } from "../canon/index.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { EventSink, ModelRequest, ModelResponse } from "../harness/types.js";
import { textMessage, textOf } from "./events.js";
import { compactionOf } from "../projection/compaction.js";
import { ApprovalParkedError, attachDecision, receiptMatchesDecision } from "./approvals.js";
import { emitInto, inputHashOf, LiveEffects } from "./live-sink.js";
import { answerOf, askCall } from "./questions.js";
import type { RecordedEffect } from "../projection/session-log.js";
import { callSignal, type SinkGuard } from "./sink-guard.js";
import type { TurnContext } from "./turn-context.js";

export type ServingMode = "replay" | "resume";

/**
 * A divergence between what the harness does now and what the journal recorded: the first divergent
 * seq (when a record is involved) and, where they are known, the expected (recorded) and actual values.
 */
export class DivergedError extends HostError {
  /** The reason alone, without the seq and values the message adds. */
  readonly why: string;
  constructor(
    readonly seq: number | undefined,
    why: string,
    readonly expected?: string,
    readonly actual?: string,
  ) {
    super(
      ErrorCode.Diverged,
      `replay diverged${seq === undefined ? "" : ` at seq ${seq}`}: ${why}${expected !== undefined ? ` (expected ${expected}; got ${actual ?? "nothing"})` : ""}`,
    );
    this.why = why;
  }
}

function diverged(seq: number | undefined, why: string, expected?: string, actual?: string): HostError {
  return new DivergedError(seq, why, expected, actual);
}

function kindName(kind: EventKind): string {
  return EventKind[kind] ?? String(kind);
}

function argsText(call: ToolCall): string {
  return call.args ? jcs(call.args) : "";
}

export class ServingEffects {
  private cursor = 0;
  readonly live: LiveEffects | undefined;

  constructor(
    private readonly ctx: TurnContext,
    private readonly effects: readonly RecordedEffect[],
    mode: ServingMode,
  ) {
    this.live = mode === "resume" ? new LiveEffects(ctx) : undefined;
  }

  /** Whether every recorded effect was consumed. */
  get exhausted(): boolean {
    return this.cursor >= this.effects.length;
  }

  get consumed(): number {
    return this.cursor;
  }

  get total(): number {
    return this.effects.length;
  }

  private peek(): RecordedEffect | undefined {
    return this.effects[this.cursor];
  }

  private take(kind: EventKind, what: string): Event {
    const next = this.peek();
    if (!next)
      throw diverged(
        undefined,
        `harness made ${what} but the turn's ${this.effects.length} recorded effects are used up`,
        "the end of the turn",
        what,
      );
    if (next.event.kind !== kind)
      throw diverged(
        next.seq,
        `harness made ${what} but the journal records ${kindName(next.event.kind)}`,
        kindName(next.event.kind),
        kindName(kind),
      );
    this.cursor++;
    return next.event;
  }

  private liveOr(what: string): LiveEffects {
    if (!this.live) throw diverged(undefined, `harness made ${what} beyond the recorded turn`);
    return this.live;
  }

  async model(request: ModelRequest, signal: AbortSignal): Promise<ModelResponse> {
    if (this.exhausted) return this.liveOr("a model call").model(request, signal);
    const seq = this.peek()?.seq;
    const call = this.take(EventKind.EVENT_MODEL_CALL, "a model call");
    const recorded = call.body.case === "model" ? call.body.value.inputHash : "";
    const hash = inputHashOf(this.ctx, request);
    if (recorded !== hash) {
      throw diverged(
        seq,
        "model input hash mismatch — the harness sent a different model request than the recorded one (I0: it violates STATELESS_REPLAY)",
        `MODEL_CALL input_hash ${recorded}`,
        `MODEL_CALL input_hash ${hash}`,
      );
    }
    if (this.exhausted) {
      // The model cut: MODEL_CALL committed, OUTPUT never was. Invoke once, then continue live.
      if (!this.live) throw diverged(seq, "recorded completion missing for MODEL_CALL");
      this.ctx.log.info({ seq }, "re-invoking the interrupted model call");
      return this.live.invokeAndRecord(request, signal);
    }
    const out = this.take(EventKind.EVENT_OUTPUT, "a model call");
    if (out.body.case !== "message") throw diverged(seq, "OUTPUT without message");
    // A compaction call's completion is its record (§16): the harness gets the summary, as live.
    const compaction = compactionOf(out.body.value);
    if (compaction) return { message: textMessage("assistant", compaction.summary) };
    this.ctx.noteOutput(textOf(out.body.value));
    return { message: out.body.value };
  }

  async output(text: string, signal: AbortSignal): Promise<void> {
    void signal;
    if (this.exhausted) return this.liveOr("an output").output(text);
    const seq = this.peek()?.seq;
    const out = this.take(EventKind.EVENT_OUTPUT, "an output");
    const recorded = out.body.case === "message" ? textOf(out.body.value) : "";
    if (recorded !== text)
      throw diverged(
        seq,
        `output ${JSON.stringify(text)} differs from the recorded ${JSON.stringify(recorded)}`,
        `OUTPUT ${JSON.stringify(recorded)}`,
        `OUTPUT ${JSON.stringify(text)}`,
      );
    this.ctx.noteOutput(text);
  }

  async toolCall(call: ToolCall, signal: AbortSignal): Promise<ToolResult> {
    if (this.exhausted) return this.liveOr("a tool call").toolCall(call, signal);
    const seq = this.peek()?.seq;
    const recordedEvent = this.take(EventKind.EVENT_TOOL_CALL, "a tool call");
    if (recordedEvent.body.case !== "tool") throw diverged(seq, "TOOL_CALL without call");
    const recorded = recordedEvent.body.value;
    if (
      recorded.id !== call.id ||
      recorded.tool !== call.tool ||
      recorded.mediation !== call.mediation ||
      recorded.idempotencyKey !== call.idempotencyKey ||
      argsText(recorded) !== argsText(call)
    ) {
      throw diverged(
        seq,
        `tool call ${call.tool}/${call.id} differs from the recorded ${recorded.tool}/${recorded.id}`,
        `TOOL_CALL ${recorded.tool}/${recorded.id} ${argsText(recorded)}`,
        `TOOL_CALL ${call.tool}/${call.id} ${argsText(call)}`,
      );
    }
    if (recorded.mediation === Mediation.REQUIRES_APPROVAL) return this.gated(recorded, seq ?? 0, signal);
    if (this.exhausted) {
      // The tool cut: intent durable, receipt never committed. Re-drive once with the recorded key.
      if (!this.live) throw diverged(seq, "recorded tool call has no result");
      this.ctx.log.info({ seq, tool: clipForLog(recorded.tool, 128) }, "re-executing the interrupted tool call");
      return this.live.execute(recorded, signal);
    }
    const resSeq = this.peek()?.seq;
    const res = this.take(EventKind.EVENT_TOOL_RESULT, "a tool call");
    if (res.body.case !== "result" || res.body.value.id !== call.id)
      throw diverged(resSeq, "recorded tool call has no result");
    return res.body.value;
  }

  /** A recorded gate: serve its receipt, complete a decided one (resume), or park again. */
  private async gated(call: ToolCall, callSeq: number, signal: AbortSignal): Promise<ToolResult> {
    this.ctx.gatedIds.add(call.id);
    if (this.exhausted) {
      // Cut between TOOL_CALL and APPROVAL_REQUEST: commit the request now, then park.
      if (!this.live) throw diverged(callSeq, "recorded gated call has no approval request");
      return this.live.gate(call, true);
    }
    const reqSeq = this.peek()?.seq ?? 0;
    const request = this.take(EventKind.EVENT_APPROVAL_REQUEST, "a gated tool call");
    if (request.body.case !== "approval" || request.body.value.toolCallId !== call.id)
      throw diverged(reqSeq, `approval request does not name call ${call.id}`);
    const parked = new ApprovalParkedError({
      executionId: this.ctx.executionId,
      toolCallId: call.id,
      requestSeq: reqSeq,
    });
    if (this.exhausted) throw parked;
    const decSeq = this.peek()?.seq ?? 0;
    const decision = this.take(EventKind.EVENT_APPROVAL_RESULT, "a gated tool call");
    if (
      decision.body.case !== "approvalResult" ||
      decision.body.value.toolCallId !== call.id ||
      Number(decision.body.value.requestSeq) !== reqSeq
    ) {
      throw diverged(decSeq, `approval decision does not match request seq ${reqSeq}`);
    }
    const { approved, reason } = decision.body.value;
    if (this.exhausted) {
      if (!this.live) throw diverged(decSeq, "decided gate has no receipt");
      return this.live.completeGate(call, reqSeq, { seq: decSeq, approved, reason }, signal);
    }
    const resSeq = this.peek()?.seq;
    const res = this.take(EventKind.EVENT_TOOL_RESULT, "a gated tool call");
    if (
      res.body.case !== "result" ||
      res.body.value.id !== call.id ||
      !receiptMatchesDecision(res.body.value, approved)
    ) {
      throw diverged(resSeq, `recorded receipt of call ${call.id} does not match its decision`);
    }
    return attachDecision(res.body.value, { toolCallId: call.id, approved, reason, requestSeq: reqSeq });
  }

  async report(result: ToolResult, signal: AbortSignal): Promise<void> {
    void signal;
    if (this.exhausted) return this.liveOr("a tool report").report(result);
    const seq = this.peek()?.seq;
    const res = this.take(EventKind.EVENT_TOOL_RESULT, "a tool report");
    if (res.body.case !== "result" || res.body.value.id !== result.id)
      throw diverged(seq, `reported result ${result.id} differs from the recorded one`);
  }

  async usage(usage: Usage, signal: AbortSignal): Promise<void> {
    void signal;
    if (this.exhausted) return this.liveOr("a usage report").usage(usage);
    const seq = this.peek()?.seq;
    const rec = this.take(EventKind.EVENT_USAGE, "a usage report");
    const same =
      rec.body.case === "usage" && jcs(toJson(UsageSchema, rec.body.value)) === jcs(toJson(UsageSchema, usage));
    if (!same) throw diverged(seq, "usage differs from the recorded one");
  }
}

export function servingSink(serving: ServingEffects, ctx: TurnContext, guard: SinkGuard): EventSink {
  const sig = (s?: AbortSignal) => callSignal(s, ctx.signal);
  const run = <T>(s: AbortSignal | undefined, op: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const signal = sig(s);
    return guard.run(() => op(signal), signal);
  };
  return {
    model: (req, s) => run(s, (signal) => serving.model(req, signal)),
    toolCall: (call, s) => run(s, (signal) => serving.toolCall(call, signal)),
    output: (text, s) => run(s, (signal) => serving.output(text, signal)),
    report: (result, s) => run(s, (signal) => serving.report(result, signal)),
    usage: (u, s) => run(s, (signal) => serving.usage(u, signal)),
    ask: (req, s) =>
      run(s, async (signal) =>
        answerOf(await serving.toolCall(askCall(ctx.executionId, ctx.nextAskIndex(), req), signal)),
      ),
    // Effects emitted while recorded effects are being served were dispatched when they first
    // committed; only the live tail's emissions reach the batch (replay never dispatches).
    emit: (effect) => {
      if (serving.live && serving.exhausted) emitInto(ctx, effect);
    },
  };
}
