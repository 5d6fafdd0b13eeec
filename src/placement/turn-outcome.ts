// What happens to a turn's result once the controller returns it, for Exec and Resume alike: a turn
// that stopped at an undecided gate is parked (docs/protocol.md §12); a completed one is checkpointed
// (every-turn memory actors) and audited. Invariants: a park appends exactly one SUSPEND under the
// turn's fence at the head and frees the actor; tool calls are counted once per turn.
import type { ApprovalRef } from "../controller/approvals.js";
import type { ToolCall } from "../gen/agentsessions/v1/common_pb.js";
import type { TurnObserver, TurnResult } from "../controller/index.js";
import type { EffectBatch } from "../effects/batch.js";
import type { Log } from "../obs/op-log.js";
import type { Admission } from "./admission.js";
import type { HarnessEntry } from "./harness-entry.js";
import type { OperationContext } from "./operation-context.js";
import type { PlacementState } from "./placement-state.js";
import { commitPark, type LazyTurnStart } from "./waits.js";
import { countTools, endTurn, type TurnMark, waitKindOf } from "./op-metrics.js";

/** A turn admitted onto its harness, nothing created or written yet. */
export interface AdmittedTurn {
  readonly entry: HarnessEntry;
  readonly admission: Admission;
  /** Where a memory turn parks from (resolved only if it parks). */
  readonly start: LazyTurnStart;
  /** The turn's metrics mark (ended once with the turn's outcome). */
  readonly mark: TurnMark | undefined;
  /** The turn's execution id (minted by placement for Exec; the interrupted turn's for Resume). */
  readonly executionId: string;
  /** The operation's logger (request_id, session, harness, turn), handed to the controller and runtime. */
  readonly log: Log;
}

/** One turn as placement runs it: where, under which fence, with what effects. */
export interface PlacedTurn extends AdmittedTurn {
  readonly session: string;
  readonly fence: number;
  readonly observer: TurnObserver | undefined;
  readonly batch: EffectBatch | undefined;
}

/** Counts the turn's tool calls and parks it when it stopped at a gate; undefined when it did not. */
export async function parkIfGated(
  state: PlacementState,
  placed: PlacedTurn,
  turn: TurnResult,
  awaited?: ToolCall,
): Promise<TurnResult | undefined> {
  countTools(state.deps.metrics, turn.records, awaited);
  if (!turn.parked) return undefined;
  const parked = await park(state, placed, { ...turn, parked: turn.parked });
  endTurn(state.deps.metrics, placed.mark, "parked");
  return parked;
}

/** A completed turn: the every-turn checkpoint, then its audit record. */
export async function completeTurn(
  { state, checkpoints }: OperationContext,
  placed: PlacedTurn,
  turn: TurnResult,
  signal: AbortSignal,
): Promise<void> {
  await checkpoints.afterTurn(placed.entry, placed.admission, placed.session, turn, signal, placed.log);
  state.effects.audit(placed.batch, turn.records.at(-1), "turn.completed", {
    execution_id: turn.executionId,
    harness: placed.entry.name,
    records: turn.records.length,
  });
}

/** Parks a turn that stopped at an undecided gate: SUSPEND at the head, actor freed. */
async function park(
  state: PlacementState,
  placed: PlacedTurn,
  turn: TurnResult & { parked: ApprovalRef },
): Promise<TurnResult> {
  const { session } = placed;
  const start = await placed.start.start(turn.executionId);
  const record = await commitPark(
    state.deps.journal,
    placed.entry,
    session,
    placed.fence,
    turn,
    start,
    placed.observer,
  );
  state.actorReleased(session);
  state.noteAppended(session, [...turn.records, record]);
  // The gate's call as the session's projection holds it (the window is current: noted just above).
  const tool = (await state.records.window(state.deps.journal, session)).log.pendingApproval()?.call.tool ?? "";
  const metrics = state.deps.metrics;
  if (metrics) {
    metrics.waitOpened(waitKindOf(tool || "approval"));
    state.openedHere.add(`${session}\u0001${turn.parked.requestSeq}`);
    if (state.openedHere.size > 100_000) state.openedHere.delete(state.openedHere.values().next().value!);
  }
  placed.log.info({ seq: record.seq, request_seq: turn.parked.requestSeq, tool }, "turn parked at a gate");
  state.effects.audit(placed.batch, record, "turn.parked", {
    execution_id: turn.parked.executionId,
    tool_call_id: turn.parked.toolCallId,
    request_seq: turn.parked.requestSeq,
  });
  return { ...turn, records: [...turn.records, record], lastSeq: record.seq };
}
