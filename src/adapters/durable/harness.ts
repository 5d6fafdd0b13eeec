// The harness a framework adapter builds (docs/integrations.md). Invariant: it is an agent-kit agent
// (`harnesshost/agent`) whose infer part hands the turn to the framework, so the conversation is
// rebuilt from Start.history after the newest compaction, compaction and budgets are the kit's, and
// the turn is STATELESS_REPLAY: everything the framework sees comes from the Start and the sink.
import { create } from "@bufbuild/protobuf";
import { agent, type Budget, type BudgetInit, type CompactInit, type CompactPart } from "../../agent/index.js";
import { Mediation, type Message } from "../../gen/agentsessions/v1/common_pb.js";
import { HarnessDescriptorSchema } from "../../gen/agentsessions/v1/harness_pb.js";
import type { Harness, HarnessDescriptor } from "../../harness/types.js";
import { memoryApplied, type AppliedStore } from "./applied.js";
import { AdapterTurn } from "./turn.js";

/** What every adapter's harness takes besides its framework's agent. */
export interface DurableInit {
  /** The descriptor id (the name you register the harness under is separate). */
  readonly id: string;
  /** Bump it whenever the agent would make other requests on the same journal. Default "1". */
  readonly version?: string;
  /** The kit's budget or its settings. Default: `budget()` (docs/agents.md §3). */
  readonly budget?: Budget | BudgetInit;
  /** The kit's compaction (docs/agents.md §5), or false for none. Default false. */
  readonly compact?: CompactPart | CompactInit | false;
  /**
   * Where harness-local tool results are kept by idempotency key before they are reported, so a
   * re-driven turn serves them instead of running the tool again. Default: one store in this process's
   * RAM; give `fileApplied(dir)` to keep that across host restarts.
   */
  readonly applied?: AppliedStore;
}

/** A tool as the descriptor lists it. */
export interface DescribedTool {
  readonly name: string;
  readonly description: string;
  readonly mediation: "host" | "local";
}

const processApplied = memoryApplied();

/** Builds the harness: the kit's turn, then `drive` with the rebuilt conversation. */
export function durableHarness(
  init: DurableInit & { readonly model: string; readonly tools: readonly DescribedTool[] },
  drive: (turn: AdapterTurn, messages: readonly Message[]) => Promise<void>,
): Harness {
  const applied = init.applied ?? processApplied;
  const inner = agent({
    id: init.id,
    ...(init.version !== undefined ? { version: init.version } : {}),
    model: init.model,
    ...(init.budget !== undefined ? { budget: init.budget } : {}),
    ...(init.compact !== undefined ? { compact: init.compact } : {}),
    infer: async (ctx, messages) => {
      const turn = new AdapterTurn(ctx, applied);
      try {
        await drive(turn, messages);
      } catch (err) {
        turn.rethrow();
        throw err;
      }
      turn.rethrow();
    },
  });
  const base = inner.describe() as HarnessDescriptor;
  const descriptor = create(HarnessDescriptorSchema, {
    id: base.id,
    version: base.version,
    models: base.models,
    capabilities: base.capabilities,
    tools: init.tools.map((t) => ({
      name: t.name,
      description: t.description,
      mediation: t.mediation === "host" ? Mediation.CONTROLLER_MEDIATED : Mediation.IN_HARNESS_REPORTED,
    })),
  });
  return { describe: () => descriptor, run: (start, sink, signal) => inner.run(start, sink, signal) };
}
