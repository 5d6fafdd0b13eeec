// Snapshot references as the journal carries them. Invariant: a session resumes only from its own
// SUSPEND records (snapshot_local == its uid); refs inherited from a fork parent are ignored.
import { EventKind, Lifecycle_Kind } from "../gen/agentsessions/v1/common_pb.js";
import type { JournalRecord } from "../journal/types.js";
import type { SnapshotRef } from "../runtime/types.js";

export interface SuspendPoint {
  readonly seq: number;
  readonly contentHash: string;
  readonly ref: SnapshotRef;
}

/** The newest SUSPEND of `session` itself, if any. */
export function lastOwnSuspend(records: readonly JournalRecord[], session: string): SuspendPoint | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    const rec = records[i]!;
    const body = rec.event.body;
    if (rec.event.kind !== EventKind.EVENT_LIFECYCLE || body.case !== "lifecycle") continue;
    const lc = body.value;
    if (lc.kind !== Lifecycle_Kind.LIFECYCLE_SUSPEND || lc.snapshotLocal !== session) continue;
    return {
      seq: rec.seq,
      contentHash: rec.contentHash,
      ref: {
        local: lc.snapshotLocal,
        externalUri: lc.snapshotExternalUri,
        memory: lc.snapshotMemory,
        sealed: lc.snapshotSealed,
      },
    };
  }
  return undefined;
}

/** Seq of the last END record (0 when no turn completed). */
export function lastEndSeq(records: readonly JournalRecord[]): number {
  for (let i = records.length - 1; i >= 0; i--)
    if (records[i]!.event.kind === EventKind.EVENT_END) return records[i]!.seq;
  return 0;
}

/** Whether the session ran any turn of its own or inherited any (an actor with history). */
export function hasTurns(records: readonly JournalRecord[]): boolean {
  return records.some((r) => r.event.kind === EventKind.EVENT_EXECUTION_START);
}
