// Session metadata as the wire's Session message. Invariant: exec_state and compute_state are
// projections of the journal (SPEC §9), never stored separately.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ComputeState, ExecState, SessionSchema, type Session } from "../gen/agentsessions/v1/session_pb.js";
import type { ComputeStateName, SessionInfo } from "../journal/types.js";

const COMPUTE: Record<ComputeStateName, ComputeState> = {
  NONE: ComputeState.COMPUTE_NONE,
  LIVE: ComputeState.COMPUTE_LIVE,
  WARM: ComputeState.COMPUTE_WARM,
  COLD: ComputeState.COMPUTE_COLD,
  TERMINATED: ComputeState.COMPUTE_TERMINATED,
};

export function sessionProto(info: SessionInfo): Session {
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
    execState: info.lastSeq === 0 ? ExecState.EXEC_PENDING : ExecState.EXEC_COMPLETED,
    computeState: COMPUTE[info.computeState],
  });
}
