// One turn of a framework agent inside a harness (docs/integrations.md). Invariants: every model call
// is one metered sink.model call (journaled MODEL_CALL + OUTPUT, served from the journal on replay and
// resume, so a replay makes zero provider calls); every tool call gets the id `<step>.<index>:<model's
// call id>` and the key `<execution id>/<that id>`, fixed by the journal, so a re-driven turn makes the
// very same calls; a host tool is run by the host (write-ahead, at most once per key, parked at the
// approval gate when gated); a local tool runs here once per key (its result kept in the applied
// store before it is reported) and is reported as TOOL_RESULT; the first sink failure of the turn is
// what the turn fails with, even when the framework caught it.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { Mediation, ToolCallSchema, type Message, type ToolDefinition } from "../../gen/agentsessions/v1/common_pb.js";
import { hostCallId, meteredModelCall, type AgentContext } from "../../agent/index.js";
import type { EventSink, StartInfo } from "../../harness/types.js";
import type { AppliedResult, AppliedStore } from "./applied.js";
import { appliedOf, jsonValueOf, toolResultOf } from "./result.js";

/** How one tool call is run. */
export interface ToolRun {
  /** The tool's name (what the host journals and, for a host tool, executes). */
  readonly tool: string;
  /** The model's id for the call. */
  readonly callId: string;
  readonly args: JsonObject;
  /** "host": the host's executor runs it; "local": `run` runs here. */
  readonly mediation: "host" | "local";
  /** The operator must decide it first (host: the approval gate; local: a question, allow/deny). */
  readonly gated: boolean;
  readonly run?: () => Promise<unknown>;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The adapter's view of a turn: the model and tools, through the sink. */
export class AdapterTurn {
  /** Model calls made so far this turn (the step of the next tool calls). */
  private step = 0;
  /** The step and index of each tool call of the newest model answer, by the model's call id. */
  private readonly positions = new Map<string, { step: number; index: number }>();
  private extra = 0;
  private failure: { error: unknown } | undefined;
  readonly sink: EventSink;

  constructor(
    readonly ctx: AgentContext,
    private readonly applied: AppliedStore | undefined,
  ) {
    this.sink = this.watch(ctx.sink);
  }

  get start(): StartInfo {
    return this.ctx.start;
  }

  get signal(): AbortSignal {
    return this.ctx.signal;
  }

  /** One model step: a metered, journaled sink.model call. */
  async model(messages: readonly Message[], tools: readonly ToolDefinition[]): Promise<Message> {
    const answer = await meteredModelCall({ ...this.ctx, sink: this.sink }, messages, {
      step: true,
      offerTools: false,
      tools,
    });
    this.step++;
    this.positions.clear();
    let index = 0;
    for (const { part } of answer.parts)
      if (part.case === "toolCall") this.positions.set(part.value.id, { step: this.step, index: index++ });
    this.extra = index;
    return answer;
  }

  /** Runs one tool call through the journal; resolves to its value or its error. */
  async tool(run: ToolRun): Promise<AppliedResult> {
    const pos = this.positions.get(run.callId) ?? { step: this.step, index: this.extra++ };
    this.positions.set(run.callId, pos);
    const id = hostCallId(pos.step, pos.index, run.callId);
    const key = `${this.start.executionId}/${id}`;
    if (run.mediation === "host") {
      const result = await this.sink.toolCall(
        create(ToolCallSchema, {
          id,
          tool: run.tool,
          args: run.args,
          mediation: run.gated ? Mediation.REQUIRES_APPROVAL : Mediation.CONTROLLER_MEDIATED,
          idempotencyKey: key,
        }),
        this.signal,
      );
      return appliedOf(result, run.tool);
    }
    const report = async (applied: AppliedResult): Promise<AppliedResult> => {
      await this.sink.report(toolResultOf(id, applied), this.signal);
      return applied;
    };
    if (run.gated) {
      if (!this.sink.ask)
        return report({ error: `tool ${run.tool} needs an approval and this host cannot ask for one` });
      const answer = await this.sink.ask(
        { question: `allow ${run.tool} ${JSON.stringify(run.args)}?`, choices: ["allow", "deny"] },
        this.signal,
      );
      if (answer.declined || answer.text !== "allow") return report({ error: `the operator denied ${run.tool}` });
    }
    const kept = await this.applied?.get(this.start.sessionUid, key);
    if (kept) return report(kept);
    if (!run.run) return report({ error: `tool ${run.tool} has nothing to run` });
    let applied: AppliedResult;
    try {
      applied = { value: jsonValueOf(await run.run()) };
    } catch (err) {
      if (this.failure) throw this.failure.error;
      applied = { error: `${run.tool} failed: ${errorText(err)}` };
    }
    await this.applied?.put(this.start.sessionUid, key, applied);
    return report(applied);
  }

  /** Throws the turn's first sink failure, if the framework swallowed one. */
  rethrow(): void {
    if (this.failure) throw this.failure.error;
  }

  /** A sink that remembers its first failure (a framework may catch it and carry on). */
  private watch(sink: EventSink): EventSink {
    const note = <T>(p: Promise<T>): Promise<T> =>
      p.catch((error: unknown) => {
        this.failure ??= { error };
        throw error;
      });
    return {
      model: (r, s) => note(sink.model(r, s)),
      toolCall: (c, s) => note(sink.toolCall(c, s)),
      output: (t, s) => note(sink.output(t, s)),
      report: (r, s) => note(sink.report(r, s)),
      usage: (u, s) => note(sink.usage(u, s)),
      ...(sink.ask ? { ask: (r, s) => note(sink.ask!(r, s)) } : {}),
      ...(sink.emit ? { emit: (e) => sink.emit!(e) } : {}),
    };
  }
}
