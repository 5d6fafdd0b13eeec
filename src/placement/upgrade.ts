// Upgrade: move a session to another version of its harness (docs/versioning.md). Invariants: refused
// before anything is written when a turn is pending or parked, when the version is not served, or
// (stateless) when a replay of the completed turns under the new version diverges — the DivergedError
// names the first divergent seq. Memory tier: the newest state is restored into the new version (which
// migrates it once), snapshotted, and the session is left cold at a SUSPEND naming that snapshot; the
// old version's live actor never runs a turn again. Either way one upgrade record (memory: plus that
// SUSPEND and its checkpoint) is committed under a new fence.
import { byActor } from "./op-actor.js";
import { ev } from "../controller/events.js";
import { replaySession } from "../controller/index.js";
import type { SessionLog } from "../projection/session-log.js";
import { upgradeEvent } from "../controller/upgrade-record.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { type Event, Lifecycle_Kind } from "../gen/agentsessions/v1/common_pb.js";
import type { SessionInfo } from "../journal/types.js";
import type { OpContext } from "../obs/context.js";
import type { SnapshotRef } from "../runtime/types.js";
import { memoryRef } from "../snapshot/ref.js";
import { admit, type Admission } from "./admission.js";
import type { HarnessEntry } from "./harness-entry.js";
import { type LockedSession, withLockedSession } from "./locked-session.js";
import type { UpgradeResult } from "./operation-types.js";
import type { PlacementState } from "./placement-state.js";

/** One upgrade under way: the session held, its target version admitted, the record to commit. */
interface Upgrade {
  readonly s: LockedSession;
  readonly entry: HarnessEntry;
  readonly admission: Admission;
  readonly from: string;
  readonly to: string;
  readonly head: number;
  readonly record: Event;
}

export async function upgradeOp(
  state: PlacementState,
  session: string,
  toVersion: string,
  signal: AbortSignal,
  ctx?: OpContext,
): Promise<UpgradeResult> {
  if (toVersion === "") throw new HostError(ErrorCode.InvalidArgument, "to_version is required");
  return withLockedSession(state, session, "upgrade", { signal, ctx }, async (s) => {
    const result = await upgradeLocked(state, s, toVersion, ctx);
    state.opLog(ctx, session, s.info.harness).info(
      {
        operation: "upgrade",
        outcome: result.upgradeSeq === 0 ? "unchanged" : "upgraded",
        from: result.from,
        to: result.to,
        seq: result.upgradeSeq,
        replayed_turns: result.replayedTurns,
      },
      "session upgraded",
    );
    return result;
  });
}

/** The upgrade itself, the session held (see the module comment). */
async function upgradeLocked(
  state: PlacementState,
  s: LockedSession,
  toVersion: string,
  ctx: OpContext | undefined,
): Promise<UpgradeResult> {
  const session = s.uid;
  const { info, window, signal } = s;
  if (window.log.pending()) {
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `session ${session} has an interrupted or parked turn; finish it on its version first (harnesshost resume), then upgrade`,
    );
  }
  const pin = window.log.pinnedVersion;
  const from = pin?.harness === info.harness ? pin.version : "";
  if (from === toVersion) return { from, to: toVersion, upgradeSeq: 0, replayedTurns: 0, snapshot: "" };
  const { entry, admission } = await admitVersion(state, info, toVersion, signal);
  const head = window.last?.seq ?? 0;
  // The target build's digest pins the session to that build straight away (get, harness list).
  const record = byActor(upgradeEvent({ harness: entry.name, from, to: toVersion, digest: admission.digest }), ctx);
  const up: Upgrade = { s, entry, admission, from, to: toVersion, head, record };
  return admission.memory ? upgradeMemory(state, up) : upgradeStateless(state, up);
}

/** The target version, served here and admitted; FAILED_PRECONDITION otherwise. */
async function admitVersion(state: PlacementState, info: SessionInfo, toVersion: string, signal: AbortSignal) {
  await state.deps.harnesses.refresh?.(info.harness);
  const entry = state.deps.harnesses.resolveVersion?.(info.harness, toVersion);
  if (!entry)
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `harness "${info.harness}" version "${toVersion}" is not served on this host; register it first (harness register --name ${info.harness} --version ${toVersion} …)`,
    );
  const admission = await admit(entry, signal);
  if (admission.descriptor.version !== toVersion)
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `harness "${info.harness}" reports version "${admission.descriptor.version}", not "${toVersion}"`,
    );
  return { entry, admission };
}

/** Stateless: the completed turns replay on the new version (a divergence refuses), then the record. */
async function upgradeStateless(state: PlacementState, up: Upgrade): Promise<UpgradeResult> {
  const { s, entry, admission, from } = up;
  const eph = await entry.runtime.ephemeral();
  let replayedTurns: number;
  try {
    const replayed = await replaySession(
      { journal: state.deps.journal },
      {
        session: s.uid,
        binding: { harness: eph.harness, name: entry.name, descriptor: admission.descriptor, digest: admission.digest },
        signal: s.signal,
        upgradeFrom: from,
      },
    );
    replayedTurns = replayed.executions.length;
  } finally {
    await eph.release();
  }
  const { record: committed } = await state.commitLifecycle(s.uid, up.head, up.record);
  return { from, to: up.to, upgradeSeq: committed.seq, replayedTurns, snapshot: "" };
}

/** Memory: the state between turns, restored into the new version (which migrates it once). */
async function upgradeMemory(state: PlacementState, up: Upgrade): Promise<UpgradeResult> {
  const { s, entry, from, to } = up;
  const source = await upgradeSource(state, s, from);
  if (!source) {
    // No turn completed yet: no state to migrate; the first turn starts a fresh actor of the version.
    const { record: committed } = await state.commitLifecycle(s.uid, up.head, up.record);
    return { from, to, upgradeSeq: committed.seq, replayedTurns: 0, snapshot: "" };
  }
  await entry.runtime.stop(s.uid);
  let migrated: SnapshotRef;
  try {
    await entry.runtime.restore(source, { sessionUid: s.uid, harnessName: entry.name });
    migrated = await entry.runtime.snapshot(s.uid, "EXTERNAL", s.signal);
  } finally {
    await entry.runtime.stop(s.uid);
  }
  const suspend = ev.lifecycle(Lifecycle_Kind.LIFECYCLE_SUSPEND, {
    snapshotLocal: migrated.local,
    snapshotExternalUri: migrated.externalUri,
    snapshotMemory: migrated.memory,
  });
  const digest = migrated.memory ? migrated.externalUri : undefined;
  const { records: committed } = await state.commitUnderNewFence(s.uid, up.head, [up.record, suspend], digest);
  // The old version's live actor (if any) holds pre-upgrade RAM: it must never run a turn again.
  const old = from === to ? undefined : state.deps.harnesses.resolveVersion?.(s.info.harness, from);
  if (old && old !== entry) await old.runtime.stop(s.uid).catch(() => undefined);
  state.actorReleased(s.uid);
  return { from, to, upgradeSeq: committed[0]?.seq ?? 0, replayedTurns: 0, snapshot: digest ?? "" };
}

/**
 * The memory state an upgrade migrates: the session's own SUSPEND when it is cold there, else its
 * newest checkpoint when no turn completed after it, else a snapshot of the live actor on its pinned
 * version; undefined when no turn ever completed (a fresh actor). FAILED_PRECONDITION otherwise.
 */
async function upgradeSource(state: PlacementState, s: LockedSession, from: string): Promise<SnapshotRef | undefined> {
  const { info } = s;
  const { log }: { log: SessionLog } = s.window;
  if (log.lastEndSeq === 0) return undefined;
  const own = log.lastOwnSuspend;
  if (info.computeState === "COLD" && own?.ref.memory && own.seq > log.lastEndSeq) return own.ref;
  const checkpoint = await state.deps.journal.latestCheckpoint(info.uid);
  const bound = checkpoint ? await s.window.record(checkpoint.seq) : undefined;
  if (checkpoint && bound?.contentHash === checkpoint.contentHash && checkpoint.seq >= log.lastEndSeq)
    return memoryRef(info.uid, checkpoint.digest);
  const old = state.deps.harnesses.resolveVersion?.(info.harness, from);
  if (old && (await old.runtime.status(info.uid)) === "LIVE" && !state.movedOn(info)) {
    const ref = await old.runtime.snapshot(info.uid, "EXTERNAL", s.signal);
    await old.runtime.stop(info.uid);
    return ref;
  }
  throw new HostError(
    ErrorCode.FailedPrecondition,
    `session ${info.uid}: no checkpoint or live actor holds its state after its last turn (seq ${log.lastEndSeq}); nothing to migrate`,
  );
}
