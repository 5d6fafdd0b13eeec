// Exec: one turn on a session (docs/protocol.md §7.1, §5.4). Invariants: new input is refused while a
// gate waits, and an off-pin or unplaceable harness is refused, before any actor, fence or write; the
// turn writes under this host's current fence (or a fresh one); a memory actor is handed no history
// (I4), a stateless one the history after the last compaction (§16).
import { execTurn, newExecutionId, type TurnResult } from "../controller/index.js";
import { turnDeadline } from "../controller/turn-deadline.js";
import type { Event } from "../gen/agentsessions/v1/common_pb.js";
import type { Incarnation } from "../runtime/types.js";
import { annotateSpan } from "../obs/trace.js";
import { admit, refuseOffPin, warnBuildDrift } from "./admission.js";
import type { LockedSession } from "./locked-session.js";
import { withLockedSession } from "./locked-session.js";
import { endTurn, failedOutcome, startTurn } from "./op-metrics.js";
import type { OperationContext } from "./operation-context.js";
import type { ExecRequest } from "./operation-types.js";
import { type AdmittedTurn, completeTurn, parkIfGated, type PlacedTurn } from "./turn-outcome.js";
import { LazyTurnStart, memoryTurnStart, refuseInputWhileGated } from "./waits.js";

export function execOp(op: OperationContext, req: ExecRequest): Promise<TurnResult> {
  return withLockedSession(
    op.state,
    req.session,
    "exec",
    { signal: req.signal, turn: true, ctx: req.ctx },
    async (s) => {
      let admitted: AdmittedTurn | undefined;
      try {
        admitted = await admitExec(op, req, s);
        const { placed, inc, history, historyBase } = await prepareExec(op, admitted, req, s);
        const result = await runExec(op, req, s, placed, inc, history, historyBase);
        return (await parkIfGated(op.state, placed, result)) ?? (await completeExec(op, req, placed, result));
      } catch (err) {
        endTurn(op.state.deps.metrics, admitted?.mark, failedOutcome(err));
        throw err;
      }
    },
  );
}

/** Refusals, resolution and admission, then the turn's metrics mark: nothing created or written yet. */
async function admitExec({ state }: OperationContext, req: ExecRequest, s: LockedSession): Promise<AdmittedTurn> {
  const { log } = s.window;
  refuseInputWhileGated(log, req.session);
  const entry = await state.resolveHarness(req.harness || s.info.harness, log, s.info);
  const admission = await admit(entry, s.signal);
  refuseOffPin(entry.name, admission.descriptor.version, log.pinnedVersion, req.session);
  warnBuildDrift(state.opLog(req.ctx, req.session, entry.name), entry.name, admission, log.pinnedVersion);
  const mark = startTurn(state.deps.metrics, entry.name, admission.memory);
  // Minted here, not by the controller, so placement's, the controller's and the runtime's lines of
  // this turn all carry the same `turn`.
  const executionId = newExecutionId();
  const opLog = state.opLog(req.ctx, req.session, entry.name, executionId);
  opLog.debug(
    { tier: admission.memory ? "memory" : "stateless", version: admission.descriptor.version },
    "turn admitted",
  );
  annotateSpan(() => ({
    "harnesshost.harness": entry.name,
    "harnesshost.tier": admission.memory ? "memory" : "stateless",
    "harnesshost.seq.from": s.info.lastSeq + 1,
  }));
  const start = new LazyTurnStart(async (id) =>
    admission.memory ? memoryTurnStart(state.deps.journal, entry, req.session, log, id) : { kind: "stateless" },
  );
  return { entry, admission, start, mark, executionId, log: opLog };
}

/** The actor, the fence and the history the turn runs with. */
async function prepareExec(
  { state, actors }: OperationContext,
  admitted: AdmittedTurn,
  req: ExecRequest,
  s: LockedSession,
): Promise<{ placed: PlacedTurn; inc: Incarnation; history: readonly Event[]; historyBase: number }> {
  const { entry, admission } = admitted;
  const inc = await actors.incarnate(entry, admission, s.info, s.window, admitted.log);
  const fence = await state.turnFence(s.info);
  const placed = { ...admitted, session: s.uid, fence, observer: req.observer, batch: s.batch };
  if (admission.memory) state.actorFence.set(s.uid, fence);
  // The window was read at the head under the session's lock, and nothing since appended: no re-read.
  const head = s.window.log.head;
  // A stateless harness's history begins after the last compaction's through_seq (§16).
  const historyBase = admission.memory ? 0 : s.window.log.historyBase(head.seq + 1);
  const history = admission.memory ? [] : await state.history.get(state.deps.journal, s.uid, head, historyBase);
  return { placed, inc, history, historyBase };
}

async function runExec(
  { state }: OperationContext,
  req: ExecRequest,
  s: LockedSession,
  placed: PlacedTurn,
  inc: Incarnation,
  history: readonly Event[],
  historyBase: number,
): Promise<TurnResult> {
  const { entry, admission } = placed;
  const deadline = turnDeadline(s.signal, state.turnMs);
  const result = await execTurn(
    state.controller(req.observer, { parking: placed.start.parking, ...(s.batch ? { effects: s.batch } : {}) }),
    {
      session: req.session,
      binding: { harness: inc.harness, name: entry.name, descriptor: admission.descriptor, digest: admission.digest },
      fence: placed.fence,
      inputs: req.inputs,
      ...(req.expectedLastSeq !== undefined ? { expectedLastSeq: req.expectedLastSeq } : {}),
      ...(req.config ? { config: req.config } : {}),
      ...(req.resumeFromSeq ? { resumeFromSeq: req.resumeFromSeq } : {}),
      history,
      historyBase,
      ...(s.info.identity ? { identity: s.info.identity } : {}),
      ...(req.ctx?.requestId !== undefined ? { requestId: req.ctx.requestId } : {}),
      ...(req.ctx?.actor !== undefined ? { actor: req.ctx.actor } : {}),
      executionId: placed.executionId,
      logger: placed.log,
      // The head the window was read at under the session's hold (prepareExec's history too).
      headSeq: s.window.log.head.seq,
      signal: deadline.signal,
    },
  ).finally(deadline.done);
  annotateSpan(() => ({
    "harnesshost.execution_id": result.executionId,
    "harnesshost.seq.to": result.lastSeq,
    "harnesshost.parked": result.parked !== undefined,
  }));
  return result;
}

async function completeExec(
  op: OperationContext,
  req: ExecRequest,
  placed: PlacedTurn,
  result: TurnResult,
): Promise<TurnResult> {
  const { state } = op;
  if (!placed.admission.memory) state.history.extend(req.session, result.records);
  state.noteAppended(req.session, result.records);
  await completeTurn(op, placed, result, req.signal);
  placed.log.debug({ seq: result.lastSeq, records: result.records.length }, "turn completed");
  endTurn(state.deps.metrics, placed.mark, "completed");
  return result;
}
