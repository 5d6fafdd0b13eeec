// Projection of a journal into executions (turns). Invariant: the journal alone decides what each
// turn was — its start, inputs, ordered effect stream and whether it completed — so replay and
// resume never depend on anything but committed records.
import { EventKind, type Event, type Message } from "../gen/agentsessions/v1/common_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { SeqEvent } from "../journal/types.js";

/** One recorded effect of a turn, with the seq it was committed at. */
export interface RecordedEffect {
  readonly seq: number;
  readonly event: Event;
}

export interface RecordedExecution {
  readonly executionId: string;
  /** Index (0-based) of the execution's EXECUTION_START among the session's records. */
  readonly startIndex: number;
  readonly startSeq: number;
  readonly harness: string;
  readonly harnessVersion: string;
  readonly config: Uint8Array;
  readonly resumeFromSeq: number;
  readonly inputCount: number;
  readonly inputs: Message[];
  readonly effects: RecordedEffect[];
  readonly completed: boolean;
  readonly lastSeq: number;
}

const EFFECT_KINDS = new Set<EventKind>([
  EventKind.EVENT_MODEL_CALL,
  EventKind.EVENT_OUTPUT,
  EventKind.EVENT_TOOL_CALL,
  EventKind.EVENT_TOOL_RESULT,
  EventKind.EVENT_USAGE,
  EventKind.EVENT_APPROVAL_REQUEST,
  EventKind.EVENT_APPROVAL_RESULT,
]);

interface Building {
  executionId: string;
  startIndex: number;
  startSeq: number;
  harness: string;
  harnessVersion: string;
  config: Uint8Array;
  resumeFromSeq: number;
  inputCount: number;
  inputs: Message[];
  effects: RecordedEffect[];
  completed: boolean;
  lastSeq: number;
}

function invalid(seq: number, why: string): HostError {
  return new HostError(ErrorCode.FailedPrecondition, `invalid execution log at seq ${seq}: ${why}`);
}

/** Groups records into executions in first-seen order; lifecycle records are session-scoped. */
export function projectExecutions(records: readonly SeqEvent[]): RecordedExecution[] {
  const byId = new Map<string, Building>();
  const order: Building[] = [];
  records.forEach((rec, index) => {
    const event = rec.event;
    if (event.kind === EventKind.EVENT_LIFECYCLE) return;
    if (event.executionId === "") throw invalid(rec.seq, "event without execution id");
    let exec = byId.get(event.executionId);
    if (!exec) {
      if (event.kind !== EventKind.EVENT_EXECUTION_START || event.body.case !== "executionStart") {
        throw invalid(rec.seq, "execution does not begin with EXECUTION_START");
      }
      const start = event.body.value;
      if (start.inputCount === undefined || start.inputCount < 0n)
        throw invalid(rec.seq, "EXECUTION_START without input_count");
      exec = {
        executionId: event.executionId,
        startIndex: index,
        startSeq: rec.seq,
        harness: start.harness,
        harnessVersion: start.harnessVersion,
        config: start.config,
        resumeFromSeq: Number(start.resumeFromSeq),
        inputCount: Number(start.inputCount),
        inputs: [],
        effects: [],
        completed: false,
        lastSeq: rec.seq,
      };
      byId.set(event.executionId, exec);
      order.push(exec);
      return;
    }
    exec.lastSeq = rec.seq;
    if (exec.completed) throw invalid(rec.seq, `event after END of execution ${exec.executionId}`);
    switch (event.kind) {
      case EventKind.EVENT_INPUT:
        if (event.body.case !== "message") throw invalid(rec.seq, "INPUT without message");
        exec.inputs.push(event.body.value);
        return;
      case EventKind.EVENT_END:
        exec.completed = true;
        return;
      case EventKind.EVENT_ERROR:
        return;
      case EventKind.EVENT_EXECUTION_START:
        throw invalid(rec.seq, "second EXECUTION_START for one execution");
      default:
        if (EFFECT_KINDS.has(event.kind)) exec.effects.push({ seq: rec.seq, event });
        else throw invalid(rec.seq, `unexpected event kind ${EventKind[event.kind] ?? event.kind}`);
    }
  });
  for (const exec of order) {
    if (exec.completed && exec.inputs.length !== exec.inputCount) {
      throw invalid(
        exec.startSeq,
        `execution ${exec.executionId} has ${exec.inputs.length} inputs, EXECUTION_START says ${exec.inputCount}`,
      );
    }
  }
  return order;
}

/** The last execution if it did not complete (the one Resume re-drives). */
export function pendingExecution(executions: readonly RecordedExecution[]): RecordedExecution | undefined {
  const last = executions.at(-1);
  return last && !last.completed ? last : undefined;
}
