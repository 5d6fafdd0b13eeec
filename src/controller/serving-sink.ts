// The serving sink: answers a harness from a turn's recorded effects, in order, without invoking
// anything. Invariants: I0 (a model request must hash to the recorded input hash), I1 (the provider
// is never called while recorded effects remain), I2 (recorded completions, reasoning parts included,
// are served verbatim), I5 (nothing is appended while serving). In resume mode, a trailing MODEL_CALL
// without OUTPUT is invoked exactly once, a trailing TOOL_CALL without result is re-executed with its
// recorded key, and then the turn continues live.
import { toJson } from "@bufbuild/protobuf";
import { EventKind, type Event, type ToolCall, type ToolResult, type Usage, UsageSchema } from "../gen/agentsessions/v1/common_pb.js";
import { jcs, modelInputHash } from "../canon/index.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { EventSink, ModelRequest, ModelResponse } from "../sdk/types.js";
import { textOf } from "./events.js";
import { LiveEffects, modelCallOf } from "./live-sink.js";
import type { RecordedEffect } from "./projection.js";
import { callSignal, type SinkGuard } from "./sink-guard.js";
import type { TurnContext } from "./turn-context.js";

export type ServingMode = "replay" | "resume";

function diverged(seq: number | undefined, why: string): HostError {
  return new HostError(ErrorCode.Diverged, `replay diverged${seq === undefined ? "" : ` at seq ${seq}`}: ${why}`);
}

function kindName(kind: EventKind): string {
  return EventKind[kind] ?? String(kind);
}

function argsText(call: ToolCall): string {
  return call.args ? jcs(call.args) : "";
}

export class ServingEffects {
  private cursor = 0;
  private readonly live: LiveEffects | undefined;

  constructor(
    private readonly ctx: TurnContext,
    private readonly effects: readonly RecordedEffect[],
    private readonly mode: ServingMode,
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
    if (!next) throw diverged(undefined, `harness made ${what} but the turn's ${this.effects.length} recorded effects are used up`);
    if (next.event.kind !== kind) throw diverged(next.seq, `harness made ${what} but the journal records ${kindName(next.event.kind)}`);
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
    const hash = modelInputHash(modelCallOf(request));
    if (recorded !== hash) {
      throw diverged(seq, "model input hash mismatch — the harness sent a different model request than the recorded one (I0: it violates STATELESS_REPLAY)");
    }
    if (this.exhausted) {
      // The model cut: MODEL_CALL committed, OUTPUT never was. Invoke once, then continue live.
      if (!this.live) throw diverged(seq, "recorded completion missing for MODEL_CALL");
      return this.live.invokeAndRecord(request, signal);
    }
    const out = this.take(EventKind.EVENT_OUTPUT, "a model call");
    if (out.body.case !== "message") throw diverged(seq, "OUTPUT without message");
    this.ctx.noteOutput(textOf(out.body.value));
    return { message: out.body.value };
  }

  async output(text: string, signal: AbortSignal): Promise<void> {
    void signal;
    if (this.exhausted) return this.liveOr("an output").output(text);
    const seq = this.peek()?.seq;
    const out = this.take(EventKind.EVENT_OUTPUT, "an output");
    const recorded = out.body.case === "message" ? textOf(out.body.value) : "";
    if (recorded !== text) throw diverged(seq, `output ${JSON.stringify(text)} differs from the recorded ${JSON.stringify(recorded)}`);
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
      throw diverged(seq, `tool call ${call.tool}/${call.id} differs from the recorded ${recorded.tool}/${recorded.id}`);
    }
    if (this.exhausted) {
      // The tool cut: intent durable, receipt never committed. Re-drive once with the recorded key.
      if (!this.live) throw diverged(seq, "recorded tool call has no result");
      return this.live.execute(recorded, signal);
    }
    const resSeq = this.peek()?.seq;
    const res = this.take(EventKind.EVENT_TOOL_RESULT, "a tool call");
    if (res.body.case !== "result" || res.body.value.id !== call.id) throw diverged(resSeq, "recorded tool call has no result");
    return res.body.value;
  }

  async report(result: ToolResult, signal: AbortSignal): Promise<void> {
    void signal;
    if (this.exhausted) return this.liveOr("a tool report").report(result);
    const seq = this.peek()?.seq;
    const res = this.take(EventKind.EVENT_TOOL_RESULT, "a tool report");
    if (res.body.case !== "result" || res.body.value.id !== result.id) throw diverged(seq, `reported result ${result.id} differs from the recorded one`);
  }

  async usage(usage: Usage, signal: AbortSignal): Promise<void> {
    void signal;
    if (this.exhausted) return this.liveOr("a usage report").usage(usage);
    const seq = this.peek()?.seq;
    const rec = this.take(EventKind.EVENT_USAGE, "a usage report");
    const same = rec.body.case === "usage" && jcs(toJson(UsageSchema, rec.body.value)) === jcs(toJson(UsageSchema, usage));
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
  };
}
