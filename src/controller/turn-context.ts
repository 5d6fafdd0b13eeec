// The state one execution shares between its sinks: where the journal head is, under which fence
// the turn writes, and who observes commits. Invariant: a turn appends only at the head it last
// wrote (CAS), under its own fence, so a superseded or concurrent writer can never interleave.
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import type { Journal, JournalRecord } from "../journal/types.js";
import type { ModelProvider } from "../model/types.js";
import type { ToolExecutor } from "./tools.js";

export interface TurnObserver {
  /** Called after each durable append, in seq order. */
  onRecord?(record: JournalRecord): void;
  /** Ephemeral streaming text (never journaled); `done` closes a model call's stream. */
  onDelta?(executionId: string, chunk: string, done: boolean): void;
}

/** Counts provider invocations; replay must leave it unchanged (invariant I1). */
export class ModelCallCounter {
  count = 0;
}

export interface ControllerDeps {
  readonly journal: Journal;
  readonly model: ModelProvider;
  readonly tools?: ToolExecutor;
  readonly observer?: TurnObserver;
  readonly modelCalls?: ModelCallCounter;
}

export class TurnContext {
  readonly records: JournalRecord[] = [];
  readonly outputs: string[] = [];
  constructor(
    readonly deps: ControllerDeps,
    readonly session: string,
    readonly executionId: string,
    readonly fence: number,
    private headSeq: number,
    readonly signal: AbortSignal,
  ) {}

  get head(): number {
    return this.headSeq;
  }

  async append(event: Event): Promise<JournalRecord> {
    const rec = await this.deps.journal.append(this.session, this.headSeq, this.fence, event);
    this.committed([rec]);
    return rec;
  }

  async appendBatch(events: readonly Event[]): Promise<JournalRecord[]> {
    const recs = await this.deps.journal.appendBatch(this.session, this.headSeq, this.fence, events);
    this.committed(recs);
    return recs;
  }

  private committed(recs: readonly JournalRecord[]): void {
    for (const rec of recs) {
      this.headSeq = rec.seq;
      this.records.push(rec);
      this.deps.observer?.onRecord?.(rec);
    }
  }

  noteOutput(text: string): void {
    this.outputs.push(text);
  }
}
