// The typed effects of session operations (docs/protocol.md §13.2): one batch per operation, the audit
// records it attaches, and their dispatch. Invariant: an operation's effects are dispatched only after
// it released the session, in commit order across operations, and never awaited by the operation.
import { EffectBatch } from "../effects/batch.js";
import { auditRecord } from "../effects/builtins.js";
import type { EffectRegistry } from "../effects/registry.js";
import type { Journal, JournalRecord } from "../journal/types.js";

export class OperationEffects {
  private dispatching: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly journal: Journal,
    private readonly registry: EffectRegistry | undefined,
    private readonly auditTurns: boolean,
  ) {}

  /** The effects of one operation (none without a registry). */
  batch(session: string): EffectBatch | undefined {
    return this.registry ? new EffectBatch(this.registry, session) : undefined;
  }

  /** Attaches an `audit.record` effect to `rec` when auditing is on and its handler is registered. */
  audit(
    batch: EffectBatch | undefined,
    rec: JournalRecord | undefined,
    event: string,
    detail: Record<string, string | number>,
  ): void {
    if (!batch || !rec || !this.auditTurns || !this.registry?.has(auditRecord.key)) return;
    batch.attach(auditRecord({ event, detail }), rec.seq);
  }

  /** Dispatches an operation's committed effects after it released the session (never awaited by it). */
  dispatch(batch: EffectBatch | undefined): void {
    const registry = this.registry;
    if (!registry || !batch || batch.committed.length === 0) return;
    const effects = [...batch.committed];
    const journal = this.journal;
    this.dispatching = this.dispatching.then(async () => {
      const head = await journal.head(batch.session).catch(() => ({ seq: 0, hash: "" }));
      await registry.dispatch(effects, (c) => ({
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
