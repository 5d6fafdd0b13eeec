// A session as every caller is served it (Sessions RPCs and the in-process CLI alike). Invariant: the
// served session is the journal's metadata plus views derived at read time — pending_approval and the
// turn status from the session log, this host's effect counters and checkpoint health as annotations —
// never stored.
import type { Session } from "../gen/agentsessions/v1/session_pb.js";
import { CHECKPOINT_ANNOTATION, type CheckpointAnnotation, EFFECTS_ANNOTATION } from "../wire/annotations.js";
import type { SessionInfo } from "../journal/types.js";
import type { Host } from "./host.js";
import { sessionView } from "./session-proto.js";

/**
 * The session as served: pending_approval from the log, effect counters as a derived annotation. Given
 * its row (already read, e.g. by the caller's project check), the row is not read again.
 */
export async function servedSession(host: Host, row: string | SessionInfo): Promise<Session> {
  const info = typeof row === "string" ? await host.getSession(row) : row;
  const uid = info.uid;
  const session = await sessionView(host.placer, info);
  const counters = host.effects.counters(uid);
  if (Object.keys(counters.dispatched).length + Object.keys(counters.failed).length > 0) {
    session.annotations[EFFECTS_ANNOTATION] = JSON.stringify(counters);
  }
  const checkpoint = await checkpointAnnotation(host, uid);
  if (checkpoint) session.annotations[CHECKPOINT_ANNOTATION] = JSON.stringify(checkpoint);
  return session;
}

/** The newest checkpoint and this host's last per-turn checkpoint failure, when there is either. */
async function checkpointAnnotation(host: Host, uid: string): Promise<CheckpointAnnotation | undefined> {
  const failure = host.placer.checkpointHealth.lastFailure(uid);
  const latest = await host.journal.latestCheckpoint(uid);
  if (!latest && !failure) return undefined;
  return {
    last_seq: latest?.seq ?? 0,
    ...(failure
      ? {
          failures: failure.count,
          last_failure: { seq: failure.seq, reason: failure.reason, at: new Date(failure.atMs).toISOString() },
        }
      : {}),
  };
}
