// The typed effects of session operations (docs/protocol.md §13.2): one batch per operation, the audit
// records it attaches, and their dispatch. Invariant: an operation's effects are dispatched only after
// it released the session, in commit order across operations, and never awaited by the operation.
import { EffectBatch } from "../effects/batch.js";
import { auditRecord } from "../effects/builtins.js";
import type { EffectDispatcher } from "../effects/dispatcher.js";
import type { Journal, JournalRecord } from "../journal/types.js";

export class OperationEffects {
  private dispatching: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly journal: Journal,
    private readonly dispatcher: EffectDispatcher | undefined,
    private readonly auditTurns: boolean,
  ) {}

  /** The effects of one operation (none without a dispatcher). */
  batch(session: string): EffectBatch | undefined {
    return this.dispatcher ? new EffectBatch(this.dispatcher, session) : undefined;
  }

  /** Attaches an `audit.record` effect to `rec` when auditing is on and its handler is registered. */
  audit(
    batch: EffectBatch | undefined,
    rec: Pick<JournalRecord, "seq"> | undefined,
    event: string,
    detail: Record<string, string | number>,
  ): void {
    if (!batch || !rec || !this.auditTurns || !this.dispatcher?.has(auditRecord.key)) return;
    batch.attach(auditRecord({ event, detail }), rec.seq);
  }

  /** Dispatches an operation's committed effects after it released the session (never awaited by it). */
  dispatch(batch: EffectBatch | undefined): void {
    const dispatcher = this.dispatcher;
    if (!dispatcher || !batch || batch.committed.length === 0) return;
    const effects = [...batch.committed];
    const journal = this.journal;
    this.dispatching = this.dispatching.then(async () => {
      const head = await journal.head(batch.session).catch(() => ({ seq: 0, hash: "" }));
      await dispatcher.dispatch(effects, (c) => ({
        session: c.session,
        lastSeq: head.seq,
        lastHash: head.hash,
        committedSeq: c.seq,
      }));
    });
  }

  /** Resolves once every effect dispatched so far has run (or failed). */
  async idle(): Promise<void> {
    let current: Promise<unknown>;
    do {
      current = this.dispatching;
      await current.catch(() => undefined);
    } while (current !== this.dispatching);
  }
}
