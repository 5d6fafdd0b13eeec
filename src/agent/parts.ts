// The shared shape of an agent's parts (docs/agents.md). Invariant: a part sees the turn only through
// this context — the Start, the sink, the signal, the tools and the turn's budget meter — so every
// effect it has goes through the sink and is journaled.
import type { Message } from "../gen/agentsessions/v1/common_pb.js";
import type { EventSink, StartInfo } from "../harness/types.js";
import type { Meter } from "./budget.js";
import type { ToolBox } from "./tools.js";

export interface AgentContext {
  readonly start: StartInfo;
  readonly sink: EventSink;
  readonly signal: AbortSignal;
  /** The model name requests carry. */
  readonly model: string;
  readonly tools: ToolBox;
  readonly meter: Meter;
}

/** The system part: the messages every model request of a turn begins with. */
export type SystemPart = (start: StartInfo) => readonly Message[];

/** The infer part: runs the turn's model loop over the prepared messages (appending as it goes). */
export type InferPart = (ctx: AgentContext, messages: Message[]) => Promise<void>;
