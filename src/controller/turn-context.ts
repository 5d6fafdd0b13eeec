// The state one execution shares between its sinks: where the journal head is, under which fence
// the turn writes, and who observes commits. Invariant: a turn appends only at the head it last
// wrote (CAS), under its own fence, so a superseded or concurrent writer can never interleave.
import { type Log, NO_LOG } from "../obs/op-log.js";
import type { InputHashForm } from "../canon/index.js";
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import type { EffectBatch } from "../effects/batch.js";
import type { Journal, JournalRecord } from "../journal/types.js";
import type { ModelProvider } from "../model/types.js";
import type { ToolPolicy } from "./tool-policy.js";
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
  /** Which tools may run without approval; without it every mediated call may (tests, embedders). */
  readonly toolPolicy?: ToolPolicy;
  readonly observer?: TurnObserver;
  readonly modelCalls?: ModelCallCounter;
  /** Effects emitted during the operation: checked before each append, released after it. */
  readonly effects?: EffectBatch;
  /**
   * Asked (lazily, once a REQUIRES_APPROVAL call is about to park the turn) whether this turn may park;
   * throws FAILED_PRECONDITION if not. Default: yes. Placement refuses it for a memory actor whose
   * turn-start state has no checkpoint to resume from.
   */
  readonly parking?: (executionId: string) => Promise<void>;
}

export class TurnContext {
  readonly records: JournalRecord[] = [];
  readonly outputs: string[] = [];
  /** Ids of the gated calls seen in this turn (a gate id is never reused within an execution). */
  readonly gatedIds = new Set<string>();
  /**
   * The turn's Start.history begins after this seq (the last compaction's through_seq before the
   * turn, docs/protocol.md §16; 0 when the harness received every prior event).
   */
  historyBase = 0;
  /** How many events the turn's Start.history holds (a compaction may replace at most these). */
  historyCount = 0;
  private asks = 0;
  /** The turn's logger (request_id, session, harness, turn bound by placement); default: nowhere. */
  log: Log = NO_LOG;
  constructor(
    readonly deps: ControllerDeps,
    readonly session: string,
    readonly executionId: string,
    readonly fence: number,
    private headSeq: number,
    readonly signal: AbortSignal,
    /** The model-input hash form this execution was written with (new executions: ours). */
    readonly inputHashForm: InputHashForm = "harnesshost",
  ) {}

  get head(): number {
    return this.headSeq;
  }

  /**
   * Events whose durability may wait for the turn's next commit: they have no effect outside the
   * journal (a model completion, whose text already streamed as deltas; usage; a harness-reported tool
   * result, whose tool already ran). Committing them with the next append saves a sync per event; a
   * crash before that commit costs what a crash before their own commit would — a trailing MODEL_CALL
   * is re-invoked once on resume, a harness-local tool whose result was lost runs again unless the
   * harness's applied store kept it.
   */
  private deferred: Event[] = [];

  defer(event: Event): void {
    this.deferred.push(event);
  }

  /** Commits deferred events (with `events` after them, in order). */
  async appendBatch(events: readonly Event[]): Promise<JournalRecord[]> {
    const all = this.deferred.length > 0 ? [...this.deferred, ...events] : events;
    if (all.length === 0) return [];
    this.deps.effects?.beforeCommit();
    const recs =
      all.length === 1
        ? [await this.deps.journal.append(this.session, this.headSeq, this.fence, all[0]!)]
        : await this.deps.journal.appendBatch(this.session, this.headSeq, this.fence, all);
    this.deferred = [];
    this.committed(recs);
    return recs.slice(recs.length - events.length);
  }

  async append(event: Event): Promise<JournalRecord> {
    const [rec] = await this.appendBatch([event]);
    return rec!;
  }

  /** Commits any deferred events. */
  async flush(): Promise<void> {
    if (this.deferred.length > 0) await this.appendBatch([]);
  }

  /** The index of the turn's next question (deterministic: replays and re-drives ask the same calls). */
  nextAskIndex(): number {
    return this.asks++;
  }

  /** Throws FAILED_PRECONDITION when this turn may not park on an approval. */
  async requireParking(): Promise<void> {
    await this.deps.parking?.(this.executionId);
  }

  private committed(recs: readonly JournalRecord[]): void {
    const last = recs.at(-1);
    if (last) this.deps.effects?.afterCommit(last.seq);
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
