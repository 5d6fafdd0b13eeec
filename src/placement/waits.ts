// Durable waits in placement (docs/protocol.md §12): parking a turn on an approval gate, refusing new input while a
// gate is unreceipted, and committing decisions. Invariants: a park appends exactly one SUSPEND under
// the turn's fence at the head and frees the actor; a memory actor's park names its turn-start
// checkpoint (a JS call stack cannot be snapshotted: resuming restores that state and re-drives the
// turn, serving what it recorded, so nothing is applied twice) — and a memory turn with no such
// checkpoint may not park at all; no timer is ever armed.
import { Lifecycle_Kind } from "../gen/agentsessions/v1/common_pb.js";
import { parkDetail, type ApprovalRef } from "../controller/approvals.js";
import type { SessionLog } from "../projection/session-log.js";
import { ev } from "../controller/events.js";
import type { ControllerDeps, TurnObserver, TurnResult } from "../controller/index.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { Journal, JournalRecord } from "../journal/types.js";
import type { SnapshotRef } from "../runtime/types.js";
import type { HarnessEntry } from "./harness-entry.js";
import { journalRef, memoryRef } from "../snapshot/ref.js";

/** The state a parked memory turn resumes from. */
export type TurnStart =
  | { readonly kind: "stateless" }
  | { readonly kind: "checkpoint"; readonly ref: SnapshotRef }
  /**
   * A fresh actor (no turn ran before): nothing to snapshot — the park records a non-memory ref and
   * the resumed turn starts on a fresh actor again.
   */
  | { readonly kind: "fresh" }
  | { readonly kind: "none"; readonly why: string };

/**
 * Where memory turn `executionId` (re)starts from, as the session-log projection answers it for the
 * session's newest checkpoint (SessionLog.restartPoint): that checkpoint, a fresh actor, or none.
 */
export async function memoryTurnStart(
  journal: Journal,
  entry: HarnessEntry,
  session: string,
  log: SessionLog,
  executionId: string,
): Promise<TurnStart> {
  const checkpoint = await journal.latestCheckpoint(session);
  const point = log.restartPoint(executionId, checkpoint);
  switch (point.kind) {
    case "checkpoint":
      return {
        kind: "checkpoint",
        ref: memoryRef(session, checkpoint!.digest),
      };
    case "fresh":
      return { kind: "fresh" };
    case "none":
      return {
        kind: "none",
        why: `memory actor ${session} (harness "${entry.name}", checkpoint policy ${entry.checkpointPolicy}): ${point.why}, so the turn can neither park nor be re-driven without applying its change twice; use the every-turn checkpoint policy`,
      };
    default: {
      const exhaustive: never = point;
      throw new Error(`unknown restart point ${String(exhaustive)}`);
    }
  }
}

/**
 * The turn-start state, computed lazily (only a turn that parks pays for it) and once; `parking` is
 * the controller's check, `start()` what the park commits.
 */
export class LazyTurnStart {
  private value: Promise<TurnStart> | undefined;
  constructor(private readonly compute: (executionId: string) => Promise<TurnStart>) {}

  readonly parking: NonNullable<ControllerDeps["parking"]> = async (executionId) => {
    const start = await this.start(executionId);
    if (start.kind === "none") throw new HostError(ErrorCode.FailedPrecondition, start.why);
  };

  start(executionId: string): Promise<TurnStart> {
    this.value ??= this.compute(executionId);
    return this.value;
  }
}

/**
 * Refuses new input (FAILED_PRECONDITION) while the session's pending turn waits on a gate of its own
 * that is open or decided without a receipt (docs/protocol.md §5.8): new input would orphan it.
 */
export function refuseInputWhileGated(log: SessionLog, session: string): void {
  const gate = log.ownUnreceiptedGate();
  if (!gate) return;
  const { executionId, toolCallId, requestSeq } = gate.ref;
  throw new HostError(
    ErrorCode.FailedPrecondition,
    gate.state === "open"
      ? `session ${session} is parked on an approval (execution ${executionId}, call ${JSON.stringify(toolCallId)}, request seq ${requestSeq}); approve or deny it, then resume`
      : `session ${session} has a decided approval (request seq ${requestSeq}) whose turn has not completed; resume it before sending new input`,
  );
}

/**
 * Commits the park: SUSPEND (detail names the gate; a memory actor's ref is its turn-start checkpoint,
 * or a non-memory ref for a fresh actor) under the turn's fence at the head, then frees the actor.
 */
export async function commitPark(
  journal: Journal,
  entry: HarnessEntry,
  session: string,
  fence: number,
  turn: TurnResult & { parked: ApprovalRef },
  start: TurnStart,
  observer?: TurnObserver,
): Promise<JournalRecord> {
  let ref: SnapshotRef = journalRef(session);
  switch (start.kind) {
    case "stateless":
      break;
    case "checkpoint":
      ref = start.ref;
      break;
    case "fresh":
      break;
    case "none":
      throw new HostError(ErrorCode.FailedPrecondition, start.why);
    default: {
      const exhaustive: never = start;
      throw new Error(`unknown turn start ${String(exhaustive)}`);
    }
  }
  const record = await journal.append(
    session,
    turn.lastSeq,
    fence,
    ev.lifecycle(Lifecycle_Kind.LIFECYCLE_SUSPEND, {
      detail: parkDetail(turn.parked),
      snapshotLocal: ref.local,
      snapshotExternalUri: ref.externalUri,
      snapshotMemory: ref.memory,
    }),
  );
  observer?.onRecord?.(record);
  if (ref.memory) {
    await journal.putCheckpoint({
      session,
      seq: record.seq,
      contentHash: record.contentHash,
      digest: ref.externalUri,
      createdAtMs: Date.now(),
    });
  }
  await entry.runtime.stop(session);
  return record;
}
