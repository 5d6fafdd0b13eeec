// What placement reports to the host's metrics about one operation (docs/operations.md, "Metrics").
// Invariant: pure bookkeeping — nothing here reads the journal or changes what an operation does; a
// host without metrics skips all of it.
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { EventKind, type ToolCall, ToolResult_Code } from "../gen/agentsessions/v1/common_pb.js";
import { ASK_TOOL } from "../controller/questions.js";
import { ErrorCode, isHostError } from "../errors/index.js";
import type { JournalRecord } from "../journal/types.js";
import type { HostMetrics, Tier, TurnMeter, TurnOutcome, WaitKind } from "../obs/metrics.js";

/** One turn being measured: started at admission. */
export interface TurnMark {
  readonly meter: TurnMeter;
  readonly started: number;
}

export function startTurn(metrics: HostMetrics | undefined, harness: string, memory: boolean): TurnMark | undefined {
  if (!metrics) return undefined;
  const tier: Tier = memory ? "memory" : "stateless";
  const meter = metrics.turnMeter(harness, tier);
  meter.started();
  return { meter, started: performance.now() };
}

export function endTurn(metrics: HostMetrics | undefined, mark: TurnMark | undefined, outcome: TurnOutcome): void {
  if (!metrics || !mark) return;
  mark.meter.finished(outcome, (performance.now() - mark.started) / 1000);
}

/** A failed turn's outcome: cancelled (the caller or a deadline stopped it) or failed. */
export function failedOutcome(err: unknown): TurnOutcome {
  return isHostError(err) && (err.code === ErrorCode.Cancelled || err.code === ErrorCode.DeadlineExceeded)
    ? "cancelled"
    : "failed";
}

/**
 * Counts the tool results a turn committed, by tool (named by the call they answer: among `records`,
 * or `awaited` — the call a resumed turn was waiting on, as the session's projection names it) and
 * outcome.
 */
export function countTools(
  metrics: HostMetrics | undefined,
  records: readonly JournalRecord[],
  awaited?: ToolCall,
): void {
  if (!metrics) return;
  let calls: Map<string, string> | undefined;
  for (const { event } of records) {
    if (event.kind === EventKind.EVENT_TOOL_CALL && event.body.case === "tool") {
      calls ??= new Map();
      calls.set(event.body.value.id, event.body.value.tool);
    } else if (event.kind === EventKind.EVENT_TOOL_RESULT && event.body.case === "result") {
      const r = event.body.value;
      const tool = calls?.get(r.id) ?? (awaited?.id === r.id ? awaited.tool : "unknown");
      metrics.toolCall(tool, r.code === ToolResult_Code.APPROVAL_DENIED ? "denied" : r.isError ? "error" : "ok");
    }
  }
}

/** Whether a gate on `tool` is a question or an approval. */
export function waitKindOf(tool: string): WaitKind {
  return tool === ASK_TOOL ? "question" : "approval";
}

/** Seconds since the record's event time (undefined when it has none). */
export function secondsSince(record: JournalRecord | undefined): number | undefined {
  const ts = record?.event.ts;
  return ts ? (Date.now() - timestampMs(ts)) / 1000 : undefined;
}

/** Runs a session operation, observing its latency and outcome. */
export async function measured<T>(
  metrics: HostMetrics | undefined,
  op: "suspend" | "resume" | "fork" | "approve",
  run: () => Promise<T>,
): Promise<T> {
  if (!metrics) return run();
  const started = performance.now();
  try {
    const result = await run();
    metrics.sessionOperation(op, true, (performance.now() - started) / 1000);
    return result;
  } catch (err) {
    metrics.sessionOperation(op, false, (performance.now() - started) / 1000);
    throw err;
  }
}
