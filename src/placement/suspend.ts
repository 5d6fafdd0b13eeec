// Suspend: snapshot the session's compute and record SUSPEND carrying the reference; free the actor
// (docs/protocol.md §7.3). Invariants: the blob is stored before the SUSPEND naming it, and the fence,
// the SUSPEND and its checkpoint commit together; a memory session with an interrupted turn is captured
// at that turn's start (§5.8 rule 7), never from a live actor that may have run part of it; a cold
// session already suspended at its head is answered with that SUSPEND, nothing written.
import { byActor } from "./op-actor.js";
import { ev } from "../controller/events.js";
import { Lifecycle_Kind } from "../gen/agentsessions/v1/common_pb.js";
import type { OpContext } from "../obs/context.js";
import type { Log } from "../obs/op-log.js";
import type { SnapshotRef } from "../runtime/types.js";
import { journalRef } from "../snapshot/ref.js";
import { admit } from "./admission.js";
import type { HarnessEntry } from "./harness-entry.js";
import { type LockedSession, withLockedSession } from "./locked-session.js";
import type { OperationContext } from "./operation-context.js";
import type { SuspendResult } from "./operation-types.js";

export function suspendOp(
  op: OperationContext,
  session: string,
  signal: AbortSignal,
  ctx: OpContext | undefined,
): Promise<SuspendResult> {
  const { state } = op;
  return withLockedSession(state, session, "suspend", { signal, ctx }, async (s) => {
    const { last, log } = s.window;
    const entry = await state.resolveHarness(s.info.harness, log, s.info);
    const opLog = state.opLog(ctx, session, entry.name);
    const existing = log.lastOwnSuspend;
    if (s.info.computeState === "COLD" && existing && existing.seq === s.info.lastSeq) {
      return { record: last!, ref: existing.ref };
    }
    const ref = await captureState(op, entry, s, opLog);
    const { record } = await state.commitLifecycle(
      session,
      last?.seq ?? 0,
      byActor(
        ev.lifecycle(Lifecycle_Kind.LIFECYCLE_SUSPEND, {
          snapshotLocal: ref.local,
          snapshotExternalUri: ref.externalUri,
          snapshotMemory: ref.memory,
        }),
        ctx,
      ),
      ref.memory ? ref.externalUri : undefined,
    );
    await entry.runtime.stop(session);
    state.actorReleased(session);
    opLog.debug({ seq: record.seq, memory: ref.memory }, "session suspended");
    return { record, ref };
  });
}

/**
 * The reference the SUSPEND carries, its blob stored. A stateless harness's state is its journal, and a
 * memory actor that never ran a turn has no state yet: either way the ref names the session and nothing
 * is captured. A memory session with an interrupted turn is captured at that turn's start.
 */
async function captureState({ actors }: OperationContext, entry: HarnessEntry, s: LockedSession, opLog: Log) {
  const admission = await admit(entry, s.signal);
  const { log } = s.window;
  const captures = admission.memory && log.hasTurns;
  if (!captures) return journalRef(s.uid);
  const pendingStart = await actors.pendingTurnStart(entry, s.uid, log);
  if (pendingStart) return pendingStart;
  await actors.requireLiveActor(entry, admission, s.info, s.window);
  const ref: SnapshotRef =
    (await actors.headCheckpoint(s.uid, s.window.last)) ??
    (await entry.runtime.snapshot(s.uid, "EXTERNAL", s.signal, opLog));
  return ref;
}
