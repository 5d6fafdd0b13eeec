// Durable waits in placement (SPEC §11): parking a turn on an approval gate, refusing new input while a
// gate is unreceipted, and committing decisions. Invariants: a park appends exactly one SUSPEND under
// the turn's fence at the head and frees the actor; a memory actor's park names its turn-start
// checkpoint (a JS call stack cannot be snapshotted: resuming restores that state and re-drives the
// turn, serving what it recorded, so nothing is applied twice) — and a memory turn with no such
// checkpoint may not park at all; no timer is ever armed.
import { EventKind, Lifecycle_Kind } from "../gen/agentsessions/v1/common_pb.js";
import { parkDetail, pendingFromLastRecord, type ApprovalRef } from "../controller/approvals.js";
import { ev } from "../controller/events.js";
import type { ControllerDeps, TurnObserver, TurnResult } from "../controller/index.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { Journal, JournalRecord } from "../journal/types.js";
import type { Incarnation, SnapshotRef } from "../runtime/types.js";
import type { HarnessEntry } from "./harness-entry.js";

/** The state a parked memory turn resumes from. */
export type TurnStart =
  | { readonly kind: "stateless" }
  | { readonly kind: "checkpoint"; readonly ref: SnapshotRef }
  /**
   * A fresh actor (the session's first turn): nothing to snapshot — the park records a non-memory ref
   * and the resumed turn starts on a fresh actor again (see isFreshPark).
   */
  | { readonly kind: "fresh" }
  | { readonly kind: "none"; readonly why: string };

/**
 * Where a memory turn starts from: the newest checkpoint, if nothing but `pendingExecution` ran after
 * it (or it is the park SUSPEND of `pendingExecution`); a fresh actor before any turn; else none.
 */
export async function memoryTurnStart(
  journal: Journal,
  entry: HarnessEntry,
  session: string,
  inc: Incarnation,
  pendingExecution?: string,
): Promise<TurnStart> {
  const checkpoint = await journal.latestCheckpoint(session);
  if (checkpoint) {
    const after = await journal.readRange(session, checkpoint.seq);
    const bound = after[0];
    if (bound && bound.seq === checkpoint.seq && bound.contentHash === checkpoint.contentHash) {
      const ref: SnapshotRef = { local: session, externalUri: checkpoint.digest, memory: true, sealed: false };
      const parkedHere = pendingFromLastRecord(bound)?.executionId;
      if (pendingExecution !== undefined && parkedHere === pendingExecution) return { kind: "checkpoint", ref };
      const ranAfter = after
        .slice(1)
        .some((r) => r.event.kind === EventKind.EVENT_EXECUTION_START && r.event.executionId !== pendingExecution);
      if (!ranAfter && !(parkedHere !== undefined && parkedHere !== pendingExecution))
        return { kind: "checkpoint", ref };
    }
  } else if (inc.origin === "created") {
    const records = await journal.readRange(session);
    const turns = records.filter(
      (r) => r.event.kind === EventKind.EVENT_EXECUTION_START && r.event.executionId !== pendingExecution,
    );
    if (turns.length === 0) return { kind: "fresh" };
  }
  return {
    kind: "none",
    why: `memory actor ${session} (harness "${entry.name}", checkpoint policy ${entry.checkpointPolicy}) has no checkpoint of this turn's starting state, so it cannot park on an approval; use the every-turn checkpoint policy`,
  };
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

/** Refuses new input (FAILED_PRECONDITION) while the session has an unreceipted approval gate. */
export async function refuseInputWhileGated(journal: Journal, session: string, head: number): Promise<void> {
  if (head === 0) return;
  const [last] = await journal.readRange(session, head, head);
  const pending = pendingFromLastRecord(last);
  const decided = last?.event.kind === EventKind.EVENT_APPROVAL_RESULT;
  if (pending || decided) {
    throw new HostError(
      ErrorCode.FailedPrecondition,
      pending
        ? `session ${session} is parked on an approval (execution ${pending.executionId}, call ${pending.toolCallId}, request seq ${pending.requestSeq}); approve or deny it, then resume`
        : `session ${session} has a decided approval whose turn has not resumed; resume it before sending new input`,
    );
  }
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
  let ref: SnapshotRef = { local: session, externalUri: "", memory: false, sealed: false };
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

/**
 * Whether the pending execution of a memory session parked as its very first turn (a fresh actor):
 * its own park SUSPEND carries no memory ref and no other turn ever ran. Resume then starts it on a
 * fresh actor — exactly the state that turn started from.
 */
export function isFreshPark(
  records: readonly JournalRecord[],
  session: string,
  pendingExecution: string | undefined,
): boolean {
  if (pendingExecution === undefined) return false;
  if (records.some((r) => r.event.kind === EventKind.EVENT_EXECUTION_START && r.event.executionId !== pendingExecution))
    return false;
  return records.some((r) => {
    const b = r.event.body;
    return (
      b.case === "lifecycle" &&
      b.value.kind === Lifecycle_Kind.LIFECYCLE_SUSPEND &&
      b.value.snapshotLocal === session &&
      !b.value.snapshotMemory &&
      pendingFromLastRecord(r)?.executionId === pendingExecution
    );
  });
}
