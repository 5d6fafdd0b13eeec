// `aiSdkHarness`: an existing Vercel AI SDK agent as a STATELESS_REPLAY harness (docs/integrations.md).
// Invariants: the agent's model is replaced, per turn, by one whose calls go through the sink; its
// tools are wrapped so each execution is journaled under the call's fixed id and key (a host tool run
// by the host, write-ahead and at most once; a local tool run here at most once per key and reported);
// the AI SDK's own `needsApproval` becomes a host gate instead of the SDK's client round-trip; the
// agent is called with the conversation the kit rebuilt from Start.history.
import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { ModelMessage, Tool, ToolExecutionOptions, ToolSet } from "ai";
import type { JsonObject } from "@bufbuild/protobuf";
import type { Harness, StartInfo } from "../../harness/types.js";
import { AgentConfigError } from "../../agent/index.js";
import { durableHarness, type DurableInit } from "../durable/harness.js";
import { hostToolExecutor, type HostToolFn } from "../durable/executor.js";
import type { AppliedStore } from "../durable/applied.js";
import type { ToolExecutor } from "../../controller/tools.js";
import type { AdapterTurn } from "../durable/turn.js";
import { modelMessagesOf } from "./convert.js";
import { sinkModel } from "./sink-model.js";

/** What the agent's function is called with, once per turn. */
export interface AiSdkTurn<TOOLS extends ToolSet> {
  /** The model to pass to generateText/streamText/ToolLoopAgent: every call goes through the host. */
  readonly model: LanguageModelV3;
  /** The agent's tools, wrapped: pass them where you passed your own. */
  readonly tools: TOOLS;
  /** The conversation so far (a compaction's summary first) and this turn's inputs. */
  readonly messages: ModelMessage[];
  /** Fires when the host cancels the turn: pass it as `abortSignal`. */
  readonly signal: AbortSignal;
  readonly start: StartInfo;
}

export interface AiSdkHarnessInit<TOOLS extends ToolSet> extends DurableInit {
  /** The agent's model, or its id: requests carry this id, the host's provider answers them. */
  readonly model: LanguageModelV3 | string;
  readonly tools?: TOOLS;
  /**
   * Tools the host executes (with `aiSdkToolExecutor(tools)` as its executor), write-ahead and at most
   * once per idempotency key; a gated one parks at the host's approval gate. Every other tool runs in
   * the harness. Default: none.
   */
  readonly hostTools?: readonly (keyof TOOLS & string)[];
  /** Your agent, called once per turn. Resolve when the turn is done (await a stream's result). */
  readonly run: (turn: AiSdkTurn<TOOLS>) => Promise<unknown>;
}

function modelIdOf(model: LanguageModelV3 | string): string {
  return typeof model === "string" ? model : model.modelId;
}

async function gated(t: Tool, input: unknown, options: ToolExecutionOptions): Promise<boolean> {
  const flag = (
    t as { needsApproval?: boolean | ((i: unknown, o: ToolExecutionOptions) => boolean | PromiseLike<boolean>) }
  ).needsApproval;
  if (flag === undefined) return false;
  return typeof flag === "function" ? await flag(input, options) : flag;
}

function wrapTools<TOOLS extends ToolSet>(tools: TOOLS, hostTools: ReadonlySet<string>, turn: AdapterTurn): TOOLS {
  const wrapped: Record<string, Tool> = {};
  for (const [name, original] of Object.entries(tools) as [string, Tool][]) {
    const execute = original.execute;
    if (!execute && !hostTools.has(name)) {
      wrapped[name] = original; // a client-side tool: the AI SDK stops the loop at it, as before
      continue;
    }
    const { needsApproval: _dropped, ...rest } = original as Tool & { needsApproval?: unknown };
    wrapped[name] = {
      ...rest,
      execute: async (input: unknown, options: ToolExecutionOptions) => {
        const outcome = await turn.tool({
          tool: name,
          callId: options.toolCallId,
          args: (input ?? {}) as JsonObject,
          mediation: hostTools.has(name) ? "host" : "local",
          gated: await gated(original, input, options),
          ...(execute ? { run: async () => execute(input as never, options) } : {}),
        });
        if ("error" in outcome) throw new Error(outcome.error);
        return outcome.value;
      },
    } as Tool;
  }
  return wrapped as TOOLS;
}

/** An AI SDK agent as a harness (the module's default export is `() => aiSdkHarness({...})`). */
export function aiSdkHarness<TOOLS extends ToolSet = ToolSet>(init: AiSdkHarnessInit<TOOLS>): Harness {
  const tools = (init.tools ?? {}) as TOOLS;
  const hostTools = new Set<string>(init.hostTools ?? []);
  for (const name of hostTools)
    if (!Object.hasOwn(tools, name))
      throw new AgentConfigError(`hostTools names ${JSON.stringify(name)}, which is not one of the tools`);
  const modelId = modelIdOf(init.model);
  return durableHarness(
    {
      ...init,
      model: modelId,
      tools: Object.entries(tools).map(([name, t]) => ({
        name,
        description: (t as Tool).description ?? "",
        mediation: hostTools.has(name) ? "host" : "local",
      })),
    },
    async (turn, messages) => {
      await init.run({
        model: sinkModel(turn, modelId),
        tools: wrapTools(tools, hostTools, turn),
        messages: modelMessagesOf(messages),
        signal: turn.signal,
        start: turn.start,
      });
    },
  );
}

/**
 * The host's executor for an AI SDK agent's host tools: runs each tool's own `execute` when the host
 * executes the call, at most once per (session, idempotency key) kept in `applied`.
 */
export function aiSdkToolExecutor(tools: ToolSet, applied?: AppliedStore): ToolExecutor {
  const fns: Record<string, HostToolFn> = {};
  for (const [name, t] of Object.entries(tools) as [string, Tool][]) {
    const execute = t.execute;
    if (!execute) continue;
    fns[name] = async (args, ctx) =>
      execute(args as never, { toolCallId: ctx.idempotencyKey, messages: [], abortSignal: ctx.signal });
  }
  return hostToolExecutor(fns, applied);
}
