// `openAIAgentsHarness`: an existing OpenAI Agents SDK agent (and the agents it hands off to) as a
// STATELESS_REPLAY harness (docs/integrations.md §2). Invariants: the Runner's model provider is the
// turn's sink, so every model call — of any agent of the graph, handoffs included — is one journaled
// sink.model call answered from the journal on replay and resume; each function tool's invoke is
// wrapped once so its execution is journaled under the call's fixed id and key (a host tool run by the
// host, a local one here, at most once per key); the SDK's own `needsApproval` becomes a host gate
// instead of the SDK's interruption round-trip; a handoff's call gets a journaled result of its own;
// the Runner starts from the conversation the kit rebuilt from Start.history.
import { AsyncLocalStorage } from "node:async_hooks";
import {
  Agent,
  Runner,
  RunContext,
  Usage,
  type FunctionTool,
  type Model,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
  type StreamEvent,
} from "@openai/agents";
import { AgentConfigError } from "../../agent/index.js";
import type { ToolExecutor } from "../../controller/tools.js";
import type { Harness } from "../../harness/types.js";
import type { AppliedStore } from "../durable/applied.js";
import { hostToolExecutor, type HostToolFn } from "../durable/executor.js";
import { durableHarness, type DurableInit } from "../durable/harness.js";
import type { AdapterTurn } from "../durable/turn.js";
import { argsOf, hostMessagesOf, hostToolsOf, inputItemsOf, outputOf } from "./convert.js";

// The SDK's Agent and FunctionTool are generic in their run context and output; the adapter handles
// every agent of a graph alike, whatever those are.
// biome-ignore lint/suspicious/noExplicitAny: any agent, whatever its context and output types
type AnyAgent = Agent<any, any>;
// biome-ignore lint/suspicious/noExplicitAny: any function tool, whatever its context, parameters and result
type AnyFunctionTool = FunctionTool<any, any, any>;

export interface OpenAIAgentsHarnessInit extends DurableInit {
  /** The agent a turn starts with; the agents it hands off to are hosted with it. */
  readonly agent: AnyAgent;
  /** The model name requests carry for an agent that names none. Default "default". */
  readonly model?: string;
  /** Function tools the host executes (`openAIAgentsToolExecutor(agent)` on the host). Default: none. */
  readonly hostTools?: readonly string[];
  /** The most model calls the Runner makes in one turn (its maxTurns). Default 10. */
  readonly maxTurns?: number;
}

const current = new AsyncLocalStorage<{ turn: AdapterTurn; hostTools: ReadonlySet<string> }>();
/** Each wrapped tool's own invoke: what the host's executor and calls outside a hosted turn run. */
const originals = new WeakMap<object, AnyFunctionTool["invoke"]>();

/** Every agent reachable from `root` through its handoffs, each once. */
export function agentsOf(root: AnyAgent): AnyAgent[] {
  const seen = new Set<AnyAgent>();
  const walk = (a: AnyAgent) => {
    if (seen.has(a)) return;
    seen.add(a);
    for (const h of a.handoffs) {
      const next = h instanceof Agent ? h : (h as { agent?: unknown }).agent;
      if (next instanceof Agent) walk(next);
    }
  };
  walk(root);
  return [...seen];
}

function functionTools(root: AnyAgent): AnyFunctionTool[] {
  return agentsOf(root).flatMap((a) => a.tools.filter((t): t is AnyFunctionTool => t.type === "function"));
}

/** Wraps each function tool's invoke (once per tool object) so a hosted turn journals it. */
function wrapTools(root: AnyAgent): void {
  for (const t of functionTools(root)) {
    if (originals.has(t)) continue;
    const invoke = t.invoke;
    originals.set(t, invoke);
    const needsApproval = t.needsApproval;
    t.needsApproval = async (ctx, input, callId) => (current.getStore() ? false : needsApproval(ctx, input, callId));
    t.invoke = async (ctx, input, details) => {
      const hosted = current.getStore();
      if (!hosted) return invoke(ctx, input, details);
      const args = argsOf(input);
      const callId = details?.toolCall?.callId ?? "";
      const outcome = await hosted.turn.tool({
        tool: t.name,
        callId,
        args,
        mediation: hosted.hostTools.has(t.name) ? "host" : "local",
        gated: await needsApproval(ctx, args as never, callId),
        run: () => invoke(ctx, input, details),
      });
      if ("error" in outcome) return outcome.error;
      return typeof outcome.value === "string" ? outcome.value : JSON.stringify(outcome.value);
    };
  }
}

/** A Model whose every call is one journaled sink.model call. */
function sinkModel(turn: AdapterTurn): Model {
  const respond = async (request: ModelRequest): Promise<ModelResponse> => {
    const answer = await turn.model(hostMessagesOf(request), hostToolsOf(request));
    // A handoff is the Runner's business, not a tool's: record its call's result so the rebuilt history
    // of later turns pairs every function call with a result, as a provider requires.
    const handoffs = new Set(request.handoffs.map((h) => h.toolName));
    for (const { part } of answer.parts)
      if (part.case === "toolCall" && handoffs.has(part.value.tool)) {
        const handoff = part.value.tool;
        await turn.tool({
          tool: handoff,
          callId: part.value.id,
          args: part.value.args ?? {},
          mediation: "local",
          gated: false,
          run: async () => ({ handoff }),
        });
      }
    return { usage: new Usage(), output: outputOf(answer) };
  };
  return {
    getResponse: respond,
    async *getStreamedResponse(request): AsyncIterable<StreamEvent> {
      const response = await respond(request);
      yield { type: "response_started" };
      for (const item of response.output)
        if (item.type === "message" && item.role === "assistant")
          for (const c of item.content)
            if (c.type === "output_text") yield { type: "output_text_delta", delta: c.text };
      yield {
        type: "response_done",
        response: {
          id: "harnesshost",
          usage: { requests: 1, inputTokens: 0, outputTokens: 0, totalTokens: 0 },
          output: response.output as never,
        },
      };
    },
  };
}

/** An OpenAI Agents SDK agent as a harness (the module's default export is `() => openAIAgentsHarness({...})`). */
export function openAIAgentsHarness(init: OpenAIAgentsHarnessInit): Harness {
  const agents = agentsOf(init.agent);
  for (const a of agents)
    if (typeof a.model !== "string")
      throw new AgentConfigError(
        `agent ${a.name} gives a Model object; name its model by string so the host serves it`,
      );
  const tools = functionTools(init.agent);
  const hostTools = new Set(init.hostTools ?? []);
  for (const name of hostTools)
    if (!tools.some((t) => t.name === name))
      throw new AgentConfigError(`hostTools names ${JSON.stringify(name)}, which is not a function tool of the agents`);
  wrapTools(init.agent);
  const fallback = init.model ?? "default";
  const modelOf = (name: string | undefined) => (name === undefined || name === "" ? fallback : name);
  return durableHarness(
    {
      ...init,
      model: modelOf(init.agent.model as string),
      tools: tools.map((t) => ({
        name: t.name,
        description: t.description,
        mediation: hostTools.has(t.name) ? "host" : "local",
      })),
    },
    async (turn, messages) => {
      const provider: ModelProvider = { getModel: () => sinkModel(turn) };
      const runner = new Runner({ modelProvider: provider, tracingDisabled: true, model: fallback });
      await current.run({ turn, hostTools }, async () => {
        const result = await runner.run(init.agent, inputItemsOf(messages), {
          signal: turn.signal,
          maxTurns: init.maxTurns ?? 10,
        });
        turn.rethrow();
        if (result.interruptions && result.interruptions.length > 0)
          throw new AgentConfigError("the agent stopped at an interruption the adapter did not turn into a host gate");
      });
    },
  );
}

/** The host's executor for an agent's host tools: runs each function tool's own invoke, at most once per key. */
export function openAIAgentsToolExecutor(agent: AnyAgent, applied?: AppliedStore): ToolExecutor {
  const fns: Record<string, HostToolFn> = {};
  for (const t of functionTools(agent)) {
    // The tool's own invoke, never the wrapper: the executor runs inside the hosted turn's async context.
    const invoke = originals.get(t) ?? t.invoke;
    fns[t.name] = (args) => invoke(new RunContext(), JSON.stringify(args));
  }
  return hostToolExecutor(fns, applied);
}
