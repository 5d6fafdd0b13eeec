// Session metadata as the wire's Session message. Invariant: exec_state and compute_state are
// projections of the journal (SPEC §9), never stored separately; pending_approval (and EXEC_AWAITING)
// is the session-log projection's pending approval — exactly the gate Approve accepts.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ComputeState, ExecState, SessionSchema, type Session } from "../gen/agentsessions/v1/session_pb.js";
import type { ApprovalRef } from "../controller/approvals.js";
import type { SessionLog } from "../controller/projection.js";
import type { ComputeStateName, SessionInfo } from "../journal/types.js";

/** Where the view gets a session's projection (the Placer's cached record window). */
export interface SessionLogSource {
  sessionLog(uid: string): Promise<SessionLog>;
}

const COMPUTE: Record<ComputeStateName, ComputeState> = {
  NONE: ComputeState.COMPUTE_NONE,
  LIVE: ComputeState.COMPUTE_LIVE,
  WARM: ComputeState.COMPUTE_WARM,
  COLD: ComputeState.COMPUTE_COLD,
  TERMINATED: ComputeState.COMPUTE_TERMINATED,
};

/** The session as the wire shows it, with pending_approval from its projection. */
export async function sessionView(logs: SessionLogSource, info: SessionInfo): Promise<Session> {
  const log = await logs.sessionLog(info.uid);
  return sessionProtoWith(info, log.pendingApproval()?.ref);
}

export function sessionProto(info: SessionInfo): Session {
  return sessionProtoWith(info, undefined);
}

/** As sessionProto, with the session's pending approval (EXEC_AWAITING) when it has one. */
export function sessionProtoWith(info: SessionInfo, pending: ApprovalRef | undefined): Session {
  return create(SessionSchema, {
    metadata: {
      project: info.project,
      name: info.name,
      uid: info.uid,
      createTime: timestampFromMs(info.createdAtMs),
      updateTime: timestampFromMs(info.updatedAtMs),
    },
    harness: info.harness,
    model: info.model,
    lastSeq: BigInt(info.lastSeq),
    parentUid: info.parentUid,
    forkSeq: BigInt(info.forkSeq),
    labels: { ...info.labels },
    annotations: { ...info.annotations },
    ...(info.identity ? { identity: info.identity } : {}),
    ...(info.origin ? { origin: info.origin } : {}),
    execState: pending
      ? ExecState.EXEC_AWAITING
      : info.lastSeq === 0
        ? ExecState.EXEC_PENDING
        : ExecState.EXEC_COMPLETED,
    ...(pending
      ? {
          pendingApproval: {
            executionId: pending.executionId,
            toolCallId: pending.toolCallId,
            requestSeq: BigInt(pending.requestSeq),
          },
        }
      : {}),
    computeState: COMPUTE[info.computeState],
  });
}
