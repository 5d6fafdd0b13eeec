// `agent({ system, tools, budget, compact, infer })`: a stateless harness built from parts
// (docs/agents.md). Invariant: a turn is a pure function of its Start — the conversation is rebuilt
// from Start.history (summary + completed turns), the parts add only journaled effects — so the agent
// declares STATELESS_REPLAY honestly: replay makes zero model calls and resume re-drives exactly.
import { create } from "@bufbuild/protobuf";
import type { Message } from "../gen/agentsessions/v1/common_pb.js";
import { Mediation } from "../gen/agentsessions/v1/common_pb.js";
import { HarnessDescriptorSchema, Resumability } from "../gen/agentsessions/v1/harness_pb.js";
import type { EventSink, Harness, HarnessDescriptor, StartInfo } from "../harness/types.js";
import { AgentConfigError, budget as makeBudget, Meter, type Budget, type BudgetInit } from "./budget.js";
import { compact as makeCompact, summaryMessage, type CompactInit, type CompactPart } from "./compact.js";
import { conversationOf } from "./conversation.js";
import { infer as stockInfer } from "./infer.js";
import type { AgentContext, InferPart, SystemPart } from "./parts.js";
import { system as makeSystem } from "./system.js";
import { ToolBox, type AgentTool } from "./tools.js";

export interface AgentInit {
  /** The descriptor id (a built-in's registry name). */
  readonly id: string;
  /** Bump it whenever the agent would make other requests on the same journal (docs/protocol.md §3). Default "1". */
  readonly version?: string;
  /** The model name every request carries. */
  readonly model: string;
  /** A prompt, a prompt computed from the Start, or a system part. Default: none. */
  readonly system?: string | ((start: StartInfo) => string | undefined) | { readonly part: SystemPart };
  readonly tools?: readonly AgentTool[];
  /** A budget (see `budget()`) or its settings. Default: `budget()`. */
  readonly budget?: Budget | BudgetInit;
  /** A compact part, its settings, or false for never. Default: false. */
  readonly compact?: CompactPart | CompactInit | false;
  /** The model loop. Default: `infer()`. */
  readonly infer?: InferPart;
}

function isBudget(b: Budget | BudgetInit): b is Budget {
  return "kind" in b && b.kind === "budget";
}

function isCompactPart(c: CompactPart | CompactInit): c is CompactPart {
  return typeof (c as CompactPart).run === "function";
}

/** A harness from parts. Every part is checked here: a bad one is refused before any session exists. */
export function agent(init: AgentInit): Harness {
  if (init.id === "") throw new AgentConfigError("id is empty");
  if (init.model === "") throw new AgentConfigError("model is empty");
  const version = init.version ?? "1";
  const systemPart: SystemPart =
    init.system === undefined ? () => [] : typeof init.system === "object" ? init.system.part : makeSystem(init.system);
  const tools = new ToolBox(init.tools ?? []);
  const limits =
    init.budget === undefined ? makeBudget() : isBudget(init.budget) ? init.budget : makeBudget(init.budget);
  const compactPart =
    init.compact === undefined || init.compact === false
      ? undefined
      : isCompactPart(init.compact)
        ? init.compact
        : makeCompact(init.compact);
  const inferPart = init.infer ?? stockInfer();
  const descriptor = create(HarnessDescriptorSchema, {
    id: init.id,
    version,
    models: [init.model],
    tools: tools.all.map((t) => ({
      name: t.name,
      description: t.description,
      mediation: t.mediation === "host" ? Mediation.CONTROLLER_MEDIATED : Mediation.IN_HARNESS_REPORTED,
    })),
    capabilities: { resumability: Resumability.STATELESS_REPLAY, forkSafe: true },
  });
  return {
    describe(): HarnessDescriptor {
      return descriptor;
    },
    async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
      const systemMessages = systemPart(start);
      const conversation = conversationOf(start.history);
      const ctx: AgentContext = {
        start,
        sink,
        signal,
        model: init.model,
        tools,
        meter: new Meter(limits, conversation.sessionTokens),
      };
      let summary = conversation.summary;
      let prior = conversation.messages;
      const compacted = compactPart ? await compactPart.run(ctx, start.history, conversation) : undefined;
      if (compacted) {
        summary = compacted.summary;
        prior = compacted.kept;
      }
      const messages: Message[] = [
        ...systemMessages,
        ...(summary !== undefined ? [summaryMessage(summary)] : []),
        ...prior,
        ...start.inputs,
      ];
      await inferPart(ctx, messages);
    },
  };
}
