// Per-turn checkpoint failures, remembered so an operator sees them (docs/operations.md, "Checkpoint
// failures"). Invariants: a failure is never silent — it is counted here, logged as a warn by the
// Placer and served by GetSession in the `harnesshost.dev/checkpoint` annotation; memory is bounded
// (at most MAX_SESSIONS sessions' last failures, oldest forgotten first; the counts never shrink).

/** Sessions whose last failure is remembered (oldest dropped first). */
export const MAX_SESSIONS = 10_000;

export interface CheckpointFailure {
  /** The END record's seq the checkpoint should have been bound to. */
  readonly seq: number;
  readonly harness: string;
  /** The cause (redacted error text). */
  readonly reason: string;
  readonly atMs: number;
  /** Failures of this session on this host since it started (consecutive or not). */
  readonly count: number;
}

export class CheckpointHealth {
  private readonly last = new Map<string, CheckpointFailure>();
  private total = 0;

  note(session: string, failure: Omit<CheckpointFailure, "count">): CheckpointFailure {
    const prior = this.last.get(session);
    const entry = { ...failure, count: (prior?.count ?? 0) + 1 };
    this.last.delete(session);
    this.last.set(session, entry);
    if (this.last.size > MAX_SESSIONS) this.last.delete(this.last.keys().next().value!);
    this.total += 1;
    return entry;
  }

  lastFailure(session: string): CheckpointFailure | undefined {
    return this.last.get(session);
  }

  /** Failures on this host since it started, every session. */
  get failures(): number {
    return this.total;
  }
}

/** What a missing checkpoint puts at risk, in the words the warn line and `get` use. */
export function checkpointRisk(lastGoodSeq: number | undefined): string {
  const since = lastGoodSeq === undefined ? "the session's start" : `seq ${lastGoodSeq}`;
  return `the actor's RAM since ${since} is held only by the live actor: if its node or this host dies, the session cannot continue past ${since}, and suspend fails with the same cause`;
}
