// The every-turn checkpoint of a memory actor (docs/protocol.md §9.4, §9.6). Invariants: a checkpoint
// binds the END record of the turn it was taken after; a failed checkpoint never fails the committed
// turn (a caller would retry a turn that happened) — it is counted, logged with what it risks and
// served by GetSession, and recovery reports the gap loudly if the RAM is then lost.
import type { TurnResult } from "../controller/index.js";
import { redactSecrets } from "../errors/redact.js";
import type { JournalRecord } from "../journal/types.js";
import type { Log } from "../obs/log.js";
import { annotateSpan, traced } from "../obs/trace.js";
import type { Admission } from "./admission.js";
import { checkpointRisk } from "./checkpoint-health.js";
import type { HarnessEntry } from "./harness-entry.js";
import type { PlacementState } from "./placement-state.js";

export class TurnCheckpoints {
  constructor(private readonly state: PlacementState) {}

  /** every-turn policy: checkpoint the actor bound to the END record of the turn just completed. */
  async afterTurn(
    entry: HarnessEntry,
    admission: Admission,
    session: string,
    turn: TurnResult,
    signal: AbortSignal,
    log: Log,
  ): Promise<void> {
    if (!admission.memory || entry.checkpointPolicy !== "every-turn") return;
    const end = turn.records.at(-1);
    if (!end) return;
    await traced(
      "harnesshost.checkpoint",
      () => ({ "harnesshost.session": session, "harnesshost.harness": entry.name, "harnesshost.seq": end.seq }),
      () => this.at(entry, session, end, signal, log),
    );
  }

  private async at(
    entry: HarnessEntry,
    session: string,
    end: JournalRecord,
    signal: AbortSignal,
    log: Log,
  ): Promise<void> {
    try {
      // Bounded by the runtime's snapshot deadline (snapshotMs) and cancelled with the caller: a node
      // that never answers costs the committed turn a missing checkpoint, never a wedged session.
      const ref = await entry.runtime.snapshot(session, "EXTERNAL", signal, log);
      if (!ref.memory) return;
      await this.state.deps.journal.putCheckpoint({
        session,
        seq: end.seq,
        contentHash: end.contentHash,
        digest: ref.externalUri,
        createdAtMs: Date.now(),
      });
      this.state.deps.metrics?.checkpoint(entry.name, true);
    } catch (err) {
      // The committed turn stands; the missing checkpoint is counted, logged and shown.
      annotateSpan(() => ({ "harnesshost.checkpoint.failed": true }));
      await this.failed(log, entry, session, end.seq, err);
    }
  }

  /** A per-turn checkpoint failed: count it, remember it for GetSession, and warn with what it risks. */
  async failed(log: Log, entry: HarnessEntry, session: string, seq: number, err: unknown): Promise<void> {
    const reason = redactSecrets(err instanceof Error ? err.message : String(err));
    const good = await this.state.deps.journal.latestCheckpoint(session).catch(() => undefined);
    const failure = this.state.checkpointHealth.note(session, { seq, harness: entry.name, reason, atMs: Date.now() });
    this.state.deps.metrics?.checkpoint(entry.name, false);
    log.warn(
      {
        seq,
        reason,
        risk: checkpointRisk(good?.seq),
        last_checkpoint_seq: good?.seq ?? 0,
        failures: failure.count,
        policy: entry.checkpointPolicy,
      },
      "checkpoint failed",
    );
  }
}
