// Session metadata as the wire's Session message. Invariant: exec_state and compute_state are
// projections of the journal (docs/protocol.md §5.8), never stored separately; exec_state, pending_approval and the
// `harnesshost.dev/turn` annotation all come from one TurnStatus (turn-status.ts); pending_approval is
// the session-log projection's pending approval — exactly the gate Approve accepts; the pin annotation
// is the projection's pin beside the build this host serves for it.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ComputeState, ExecState, SessionSchema, type Session } from "../gen/agentsessions/v1/session_pb.js";
import type { SessionLog } from "../projection/session-log.js";
import { buildsDiffer } from "../journal/pin.js";
import {
  COMPACTION_ANNOTATION,
  PIN_ANNOTATION,
  TURN_ANNOTATION,
  type CompactionAnnotation,
  type PinAnnotation,
} from "../wire/annotations.js";
import { execStateOf, turnAnnotation, turnStatus, type TurnStatus } from "./turn-status.js";
import type { ComputeStateName, SessionInfo } from "../journal/types.js";

/** Where the view gets a session's projection (the Placer's cached record window). */
export interface SessionLogSource {
  sessionLog(uid: string): Promise<SessionLog>;
  /** This host's session guard: a held session is running. */
  readonly guard?: { isBusy(uid: string): boolean };
  /** The build digest this host serves for a version of a harness ("" unknown; docs/versioning.md). */
  buildDigest?(harness: string, version: string): string;
}

const COMPUTE: Record<ComputeStateName, ComputeState> = {
  NONE: ComputeState.COMPUTE_NONE,
  LIVE: ComputeState.COMPUTE_LIVE,
  WARM: ComputeState.COMPUTE_WARM,
  COLD: ComputeState.COMPUTE_COLD,
  TERMINATED: ComputeState.COMPUTE_TERMINATED,
};

/**
 * The session as the wire shows it: exec_state, pending_approval, the turn annotation and (when it
 * compacted) the compaction annotation, all from its projection.
 */
export async function sessionView(logs: SessionLogSource, info: SessionInfo): Promise<Session> {
  return (await sessionViewWithTurn(logs, info)).session;
}

/** sessionView, with the turn status its annotation was rendered from (for callers that filter on it). */
export async function sessionViewWithTurn(
  logs: SessionLogSource,
  info: SessionInfo,
): Promise<{ session: Session; turn: TurnStatus }> {
  const log = await logs.sessionLog(info.uid);
  const turn = turnStatus(log, logs.guard?.isBusy(info.uid) ?? false);
  const session = sessionProtoWith(info, turn);
  const pin = log.pinnedVersion;
  if (pin) {
    const serving = logs.buildDigest?.(pin.harness, pin.version) ?? "";
    const value: PinAnnotation = {
      harness: pin.harness,
      version: pin.version,
      digest: pin.digest,
      ...(serving !== "" ? { serving_digest: serving } : {}),
      ...(buildsDiffer(pin.digest, serving) ? { drift: true as const } : {}),
    };
    session.annotations[PIN_ANNOTATION] = JSON.stringify(value);
  }
  const c = log.lastCompaction;
  if (c) {
    const value: CompactionAnnotation = { seq: c.seq, from_seq: c.fromSeq, through_seq: c.throughSeq };
    session.annotations[COMPACTION_ANNOTATION] = JSON.stringify(value);
  }
  return { session, turn };
}

/**
 * The session from its metadata row alone (a session just created or forked, whose turn status is not
 * read): exec_state is PENDING before any record, else UNSPECIFIED — use sessionView to know it.
 */
export function sessionProto(info: SessionInfo): Session {
  return sessionProtoWith(info, undefined);
}

/** As sessionProto, with the session's turn status when it is known. */
export function sessionProtoWith(info: SessionInfo, status: TurnStatus | undefined): Session {
  const pending = status?.kind === "awaiting" && status.owner === "own" ? status.ref : undefined;
  const annotations = { ...info.annotations };
  if (status !== undefined) annotations[TURN_ANNOTATION] = JSON.stringify(turnAnnotation(status));
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
    annotations,
    ...(info.identity ? { identity: info.identity } : {}),
    ...(info.origin ? { origin: info.origin } : {}),
    execState:
      status !== undefined
        ? execStateOf(status)
        : info.lastSeq === 0
          ? ExecState.EXEC_PENDING
          : ExecState.EXEC_STATE_UNSPECIFIED,
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
