// What one turn of a harness node may make the host do (TurnLimits: events, bytes, model and tool
// calls). Invariant: an event past a bound fails the turn RESOURCE_EXHAUSTED naming the limit before
// the host journals or acts on it.
import { type Event, EventKind } from "../gen/agentsessions/v1/common_pb.js";
import { overLimit } from "../limits/index.js";
import type { TurnLimits } from "./limits.js";

/** What one turn received so far, checked against TurnLimits as each event arrives. */
export class TurnBudget {
  events = 0;
  bytes = 0;
  modelCalls = 0;
  toolCalls = 0;
  constructor(
    private readonly limits: TurnLimits,
    private readonly address: string,
  ) {}

  /** Counts the event (whose encoded size was `bytes`); RESOURCE_EXHAUSTED when it crosses a limit. */
  admit(event: Event, bytes: number): void {
    const l = this.limits;
    const from = `harness node at ${this.address}`;
    this.events += 1;
    this.bytes += bytes;
    if (this.events > l.turnEvents)
      throw overLimit("turnEvents", l.turnEvents, this.events, `events of one turn from ${from}`);
    if (this.bytes > l.turnBytes)
      throw overLimit("turnBytes", l.turnBytes, this.bytes, `bytes of one turn from ${from}`);
    if (event.kind === EventKind.EVENT_MODEL_CALL && ++this.modelCalls > l.turnModelCalls)
      throw overLimit("turnModelCalls", l.turnModelCalls, this.modelCalls, `model calls of one turn from ${from}`);
    if (event.kind === EventKind.EVENT_TOOL_CALL && ++this.toolCalls > l.turnToolCalls)
      throw overLimit("turnToolCalls", l.turnToolCalls, this.toolCalls, `tool calls of one turn from ${from}`);
  }
}
