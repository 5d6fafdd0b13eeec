// The effects of one operation, tied to its commits. Invariants: an emitted effect is validated at
// emit time; before a commit every pending key must have a handler (else the commit is refused and
// nothing is appended); effects become dispatchable only once the commit that carried them succeeded;
// effects whose commit never happened are dropped, never dispatched.
import type { EmittedEffect } from "../harness/types.js";
import type { CommittedEffect, EffectDispatcher } from "./dispatcher.js";

export class EffectBatch {
  private pending: EmittedEffect[] = [];
  private readonly committedList: CommittedEffect[] = [];

  constructor(
    private readonly dispatcher: EffectDispatcher,
    readonly session: string,
  ) {}

  /** Validates and queues an effect for the next commit. */
  emit(effect: EmittedEffect): void {
    this.pending.push(this.dispatcher.validate(effect));
  }

  /** Called before an append: throws (and drops the pending effects) when a key has no handler. */
  beforeCommit(): void {
    try {
      this.dispatcher.requireHandlers(this.pending);
    } catch (err) {
      this.pending = [];
      throw err;
    }
  }

  /** Called after an append committed at `seq`. */
  afterCommit(seq: number): void {
    for (const effect of this.pending) this.committedList.push({ effect, session: this.session, seq });
    this.pending = [];
  }

  /** Host code: attaches an effect to a record already committed at `seq` (handler required). */
  attach(effect: EmittedEffect, seq: number): void {
    const valid = this.dispatcher.validate(effect);
    this.dispatcher.requireHandlers([valid]);
    this.committedList.push({ effect: valid, session: this.session, seq });
  }

  /** Drops effects whose commit will not happen. */
  discardPending(): void {
    this.pending = [];
  }

  get committed(): readonly CommittedEffect[] {
    return this.committedList;
  }
}
