// Fork: branch a session at a seq into children (docs/protocol.md §5.6, §7.3). Invariants: a stateless
// harness forks at any seq of the parent; a memory harness only at the head or its newest checkpoint
// (RAM state exists nowhere else), the parent checkpointed once and every child restored from that one
// blob; the children are all-or-nothing — every child and its checkpoint row in one transaction, and
// any child provisioned for a failed fork is stopped; a fork whose caller goes away is cancelled —
// the parent's snapshot call to its node with it — and writes nothing.
import { clipForLog, lazyChild, type Log } from "../obs/op-log.js";
import { ev } from "../controller/events.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { Lifecycle_Kind } from "../gen/agentsessions/v1/common_pb.js";
import type { JournalRecord, SessionInfo } from "../journal/types.js";
import type { SnapshotRef } from "../runtime/types.js";
import { journalRef, memoryRef } from "../snapshot/ref.js";
import { admit, type Admission } from "./admission.js";
import type { HarnessEntry } from "./harness-entry.js";
import { type LockedSession, withLockedSession } from "./locked-session.js";
import type { OperationContext } from "./operation-context.js";
import type { ForkRequest, ForkResult } from "./operation-types.js";

export function forkOp(op: OperationContext, req: ForkRequest): Promise<ForkResult> {
  const { state } = op;
  return withLockedSession(state, req.parent, "fork", { signal: req.signal, ctx: req.ctx }, async (s) => {
    const entry = await state.resolveHarness(s.info.harness, s.window.log, s.info);
    const admission = await admit(entry, req.signal);
    const head = await state.deps.journal.head(req.parent);
    const atSeq = req.atSeq === 0 ? head.seq : req.atSeq;
    if (atSeq < 1 || atSeq > head.seq) {
      throw new HostError(
        ErrorCode.InvalidArgument,
        `fork at seq ${atSeq} is outside the session's records 1..${head.seq}`,
      );
    }
    const ref = !admission.memory
      ? journalRef(req.parent)
      : atSeq !== head.seq
        ? await checkpointAt(op, admission, req.parent, atSeq, head.seq)
        : await memoryForkSource(op, entry, admission, s, atSeq);
    const opLog = state.opLog(req.ctx, req.parent, entry.name);
    const markers = await makeChildren(op, entry, req, atSeq, ref, opLog);
    const children: SessionInfo[] = [];
    for (const [i, meta] of req.children.entries()) {
      const marker = markers[i];
      if (ref.memory && marker) state.actorFence.set(meta.uid, marker.fence);
      children.push(await state.session(meta.uid));
    }
    opLog.debug({ at_seq: atSeq, children: children.length, memory: ref.memory }, "session forked");
    return { children, atSeq };
  });
}

/**
 * RAM state exists only at the head — or at the newest checkpoint, whose blob captured it (how a lost
 * on-suspend actor is recovered): the ref of that checkpoint when it is bound to `atSeq`, else UNPLACEABLE.
 */
async function checkpointAt(
  { state }: OperationContext,
  admission: Admission,
  parent: string,
  atSeq: number,
  headSeq: number,
): Promise<SnapshotRef> {
  const journal = state.deps.journal;
  const checkpoint = await journal.latestCheckpoint(parent);
  const bound = checkpoint?.seq === atSeq ? (await journal.readRange(parent, atSeq, atSeq))[0] : undefined;
  if (!checkpoint || !bound || bound.contentHash !== checkpoint.contentHash) {
    throw new HostError(
      ErrorCode.Unplaceable,
      `harness "${admission.descriptor.id}" requires REQUIRES_MEMORY_SNAPSHOT, which can only fork at the log head (${headSeq}) or its newest checkpoint${checkpoint ? ` (${checkpoint.seq})` : ""}, not seq ${atSeq}`,
    );
  }
  return memoryRef(parent, checkpoint.digest);
}

/** Provisions every child on the runtime, then commits them all in one transaction; undoes on failure. */
async function makeChildren(
  { state }: OperationContext,
  entry: HarnessEntry,
  req: ForkRequest,
  atSeq: number,
  ref: SnapshotRef,
  opLog: Log,
): Promise<JournalRecord[]> {
  const provisioned: string[] = [];
  try {
    for (const meta of req.children) {
      const log = lazyChild(opLog, () => ({ child: clipForLog(meta.uid, state.logFieldChars) }));
      await entry.runtime.fork(ref, { childSessionUid: meta.uid, harnessName: entry.name, log });
      provisioned.push(meta.uid);
    }
    // Every child and its checkpoint row in one transaction: all children exist, or none does.
    // A caller gone while the children were provisioned: nothing is written (they are stopped below).
    throwIfCancelled(req.signal, "fork");
    return await state.deps.journal.forkAll(
      req.parent,
      atSeq,
      req.children.map((meta) => ({
        meta: {
          ...meta,
          parentUid: req.parent,
          forkSeq: atSeq,
          ...(req.ctx?.actor !== undefined ? { forkedBy: req.ctx.actor } : {}),
        },
        ...(ref.memory ? { checkpointDigest: ref.externalUri } : {}),
      })),
    );
  } catch (err) {
    await Promise.allSettled(provisioned.map((uid) => entry.runtime.stop(uid)));
    throw err;
  }
}

/** The parent's checkpoint for a memory fork at the head: its SUSPEND ref if cold, else a new SUSPEND. */
async function memoryForkSource(
  { state, actors }: OperationContext,
  entry: HarnessEntry,
  admission: Admission,
  s: LockedSession,
  atSeq: number,
): Promise<SnapshotRef> {
  const { info } = s;
  const window = await state.records.window(state.deps.journal, info.uid);
  const own = window.log.lastOwnSuspend;
  if (info.computeState === "COLD" && own && own.seq === atSeq && own.ref.memory) return own.ref;
  // No turn yet: no RAM state to clone; each child starts from a fresh actor like the parent would.
  if (!window.log.hasTurns) return journalRef(info.uid);
  // An interrupted turn: the children inherit it at its start (§5.8 rule 7), never a partial run.
  const pendingStart = await actors.pendingTurnStart(entry, info.uid, window.log);
  if (pendingStart) return pendingStart;
  await actors.requireLiveActor(entry, admission, info, window);
  // Bounded by snapshotMs and cancelled with the caller: a client that goes away ends the transfer.
  const ref = await entry.runtime.snapshot(info.uid, "EXTERNAL", s.signal).catch((err: unknown) => {
    throwIfCancelled(s.signal, "fork's parent snapshot", err);
    throw err;
  });
  throwIfCancelled(s.signal, "fork's parent snapshot");
  if (!ref.memory || ref.externalUri === "") {
    throw new HostError(
      ErrorCode.Unplaceable,
      `runtime ${entry.runtime.name} produced no external snapshot handle to clone from`,
    );
  }
  const suspend = ev.lifecycle(Lifecycle_Kind.LIFECYCLE_SUSPEND, {
    snapshotLocal: ref.local,
    snapshotExternalUri: ref.externalUri,
    snapshotMemory: true,
  });
  await state.commitLifecycle(info.uid, atSeq, suspend, ref.externalUri);
  await entry.runtime.stop(info.uid);
  state.actorFence.delete(info.uid);
  return ref;
}

/** CANCELLED when the caller's signal fired (a fork that lost its caller writes nothing). */
function throwIfCancelled(signal: AbortSignal, what: string, cause?: unknown): void {
  if (!signal.aborted) return;
  const reason: unknown = signal.reason;
  if (reason instanceof HostError) throw reason;
  throw new HostError(ErrorCode.Cancelled, `${what} cancelled: the caller went away`, {
    cause: cause ?? reason,
  });
}
