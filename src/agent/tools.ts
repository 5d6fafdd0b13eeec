// The tools part of an agent (docs/agents.md): typed tools whose arguments are checked with zod. A
// model's tool call becomes exactly one journaled outcome: the host's TOOL_CALL/TOOL_RESULT (a
// host-mediated tool, parked at the approval gate when its policy asks), or a reported TOOL_RESULT (a
// harness-local tool, a call with bad arguments or an unknown tool). Invariants: bad arguments are a
// tool error result the model sees, never a crash; call ids and idempotency keys derive from the
// execution id, the step and the model's call id only, so a replay or re-drive makes the same calls and
// the host runs a host-mediated tool at most once; the kit's approval policy can only add a gate — the
// host's operator policy still refuses an ungated call it does not allow (docs/protocol.md §6, I3).
import { create, type JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import {
  Mediation,
  ToolCallSchema,
  ToolResultSchema,
  type ToolCall,
  type ToolDefinition,
  type ToolResult,
} from "../gen/agentsessions/v1/common_pb.js";
import type { EventSink, StartInfo } from "../harness/types.js";
import { AgentConfigError } from "./budget.js";
import { hostCallId } from "./conversation.js";

/** When a call needs an operator's approval: always, never, or when the predicate says so. */
export type ApprovalPolicy<A> = "always" | "never" | ((args: A) => boolean);

/** What a harness-local tool returns: a JSON object (its output) or text. */
export type LocalResult = JsonObject | string;

export interface LocalToolContext {
  readonly start: StartInfo;
  readonly signal: AbortSignal;
}

export interface ToolInit<S extends z.ZodType> {
  /** The name the model calls it by (and, host-mediated, the tool the host executes). */
  readonly name: string;
  readonly description?: string;
  /** The arguments' schema; the model is offered its JSON Schema. */
  readonly args: S;
  /**
   * Harness-local: runs in the harness and is reported; it MUST be a pure function of its arguments
   * (replay runs it again). Omit it for a host-mediated tool, which the host's executor runs.
   */
  readonly run?: (args: z.infer<S>, ctx: LocalToolContext) => LocalResult | Promise<LocalResult>;
  /** Default "never" (the operator's policy may still require one for a host-mediated tool). */
  readonly approval?: ApprovalPolicy<z.infer<S>>;
}

export interface AgentTool {
  readonly name: string;
  readonly description: string;
  readonly mediation: "host" | "local";
  readonly definition: ToolDefinition;
  /** Checks the arguments; returns the error text or the parsed value. */
  parse(args: unknown): { ok: true; value: unknown } | { ok: false; error: string };
  needsApproval(args: unknown): boolean;
  runLocal?(args: unknown, ctx: LocalToolContext): Promise<LocalResult>;
}

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Declares a tool. The name must be 1–64 characters of letters, digits, `_`, `.` or `-`. */
export function tool<S extends z.ZodType>(init: ToolInit<S>): AgentTool {
  if (!NAME.test(init.name))
    throw new AgentConfigError(`tool name ${JSON.stringify(init.name)} is not 1-64 of [A-Za-z0-9_.-]`);
  let schema: JsonObject;
  try {
    schema = z.toJSONSchema(init.args) as JsonObject;
  } catch (err) {
    throw new AgentConfigError(`tool ${init.name}: its args schema has no JSON Schema form (${String(err)})`);
  }
  const approval = init.approval ?? "never";
  const run = init.run;
  return {
    name: init.name,
    description: init.description ?? "",
    mediation: run ? "local" : "host",
    definition: {
      $typeName: "agentsessions.v1.ToolDefinition",
      name: init.name,
      description: init.description ?? "",
      inputSchema: schema,
    },
    parse(args) {
      const r = init.args.safeParse(args);
      return r.success ? { ok: true, value: r.data } : { ok: false, error: z.prettifyError(r.error) };
    },
    needsApproval(args) {
      return approval === "always" ? true : approval === "never" ? false : approval(args as z.infer<S>);
    },
    ...(run ? { runLocal: async (args: unknown, ctx: LocalToolContext) => run(args as z.infer<S>, ctx) } : {}),
  };
}

/** The tools of an agent, by name. */
export class ToolBox {
  private readonly byName = new Map<string, AgentTool>();

  constructor(tools: readonly AgentTool[]) {
    for (const t of tools) {
      if (this.byName.has(t.name)) throw new AgentConfigError(`two tools are named ${JSON.stringify(t.name)}`);
      this.byName.set(t.name, t);
    }
  }

  get definitions(): ToolDefinition[] {
    return [...this.byName.values()].map((t) => t.definition);
  }

  get all(): readonly AgentTool[] {
    return [...this.byName.values()];
  }

  /** Runs one of the model's tool calls; the result is journaled (by the host or reported). */
  async run(
    call: ToolCall,
    step: number,
    index: number,
    start: StartInfo,
    sink: EventSink,
    signal: AbortSignal,
  ): Promise<ToolResult> {
    const id = hostCallId(step, index, call.id);
    const failed = async (error: string): Promise<ToolResult> => {
      const result = create(ToolResultSchema, { id, isError: true, error });
      await sink.report(result, signal);
      return result;
    };
    const t = this.byName.get(call.tool);
    if (!t)
      return failed(`unknown tool ${JSON.stringify(call.tool)}; the tools are: ${[...this.byName.keys()].join(", ")}`);
    const parsed = t.parse(call.args ?? {});
    if (!parsed.ok) return failed(`invalid arguments for ${t.name}: ${parsed.error}`);
    const gated = t.needsApproval(parsed.value);
    if (t.mediation === "host") {
      return sink.toolCall(
        create(ToolCallSchema, {
          id,
          tool: t.name,
          args: (call.args ?? {}) as JsonObject,
          mediation: gated ? Mediation.REQUIRES_APPROVAL : Mediation.CONTROLLER_MEDIATED,
          idempotencyKey: `${start.executionId}/${id}`,
        }),
        signal,
      );
    }
    if (gated) {
      if (!sink.ask) return failed(`tool ${t.name} needs an approval and this host cannot ask for one`);
      const answer = await sink.ask(
        { question: `allow ${t.name} ${JSON.stringify(call.args ?? {})}?`, choices: ["allow", "deny"] },
        signal,
      );
      if (answer.declined || answer.text !== "allow") return failed(`the operator denied ${t.name}`);
    }
    let out: LocalResult;
    try {
      out = await t.runLocal!(parsed.value, { start, signal });
    } catch (err) {
      return failed(`${t.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    const result = create(
      ToolResultSchema,
      typeof out === "string"
        ? { id, content: [{ part: { case: "text", value: { text: out } } }] }
        : { id, output: out },
    );
    await sink.report(result, signal);
    return result;
  }
}
