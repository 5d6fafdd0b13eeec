// What an agent knows at the start of a turn, rebuilt from Start.history alone (docs/agents.md). The
// invariant: the result is a pure function of the history events, so a live turn, its replay and its
// re-drive build the very same model requests. The newest compaction's summary stands for everything
// before the history window; every input stands, but completions and tool results come from completed
// executions only (a cut or refused turn leaves no half exchange, e.g. an assistant tool call without
// its result); session tokens are the
// USAGE records of the window on top of the last total the kit recorded at a compaction.
import { create } from "@bufbuild/protobuf";
import {
  EventKind,
  MessageSchema,
  ToolResultSchema,
  type Event,
  type Message,
  type ToolResult,
} from "../gen/agentsessions/v1/common_pb.js";
import { compactionOfEvent } from "../projection/compaction.js";

/** USAGE model name of the session total the kit records after a compaction (input_tokens = total). */
export const SESSION_TOTAL_USAGE = "harnesshost.agent/session-total";

export interface Conversation {
  /** The newest compaction's summary in the window, if any. */
  readonly summary: string | undefined;
  /** The window's inputs, and the completions and tool results of its completed executions, in order. */
  readonly messages: readonly Message[];
  /** Estimated tokens the session used before this turn. */
  readonly sessionTokens: number;
}

/** The id the kit gives the host for a model's tool call: `<step>.<index>:<model's call id>`. */
export function hostCallId(step: number, index: number, modelId: string): string {
  return `${step}.${index}:${modelId}`;
}

/** The model's call id inside a kit host call id; undefined for ids the kit did not make. */
export function modelCallIdOf(hostId: string): string | undefined {
  const m = /^[0-9]+\.[0-9]+:(.*)$/s.exec(hostId);
  return m ? m[1] : undefined;
}

/** The message that feeds a tool's result back to the model (same shape live and rebuilt). */
export function toolMessage(modelId: string, result: ToolResult): Message {
  const fed = create(ToolResultSchema, {
    id: modelId,
    isError: result.isError,
    error: result.error,
    code: result.code,
    content: result.content,
    ...(result.output !== undefined ? { output: result.output } : {}),
  });
  return create(MessageSchema, { role: "tool", parts: [{ part: { case: "toolResult", value: fed } }] });
}

export function conversationOf(history: readonly Event[]): Conversation {
  let summary: string | undefined;
  const messages: Message[] = [];
  let turn: Message[] = [];
  let sessionTokens = 0;
  for (const e of history) {
    switch (e.kind) {
      case EventKind.EVENT_EXECUTION_START:
        turn = [];
        break;
      case EventKind.EVENT_INPUT:
        // Inputs stand even when their turn did not complete: the user did say them.
        if (e.body.case === "message") messages.push(e.body.value);
        break;
      case EventKind.EVENT_OUTPUT: {
        const c = compactionOfEvent(e);
        if (c) summary = c.summary;
        else if (e.body.case === "message") turn.push(e.body.value);
        break;
      }
      case EventKind.EVENT_TOOL_RESULT: {
        if (e.body.case !== "result") break;
        const modelId = modelCallIdOf(e.body.value.id);
        if (modelId !== undefined) turn.push(toolMessage(modelId, e.body.value));
        break;
      }
      case EventKind.EVENT_USAGE:
        if (e.body.case !== "usage") break;
        if (e.body.value.model === SESSION_TOTAL_USAGE) sessionTokens = Number(e.body.value.inputTokens);
        else sessionTokens += Number(e.body.value.inputTokens) + Number(e.body.value.outputTokens);
        break;
      case EventKind.EVENT_END:
        messages.push(...turn);
        turn = [];
        break;
      default:
        break;
    }
  }
  return { summary, messages, sessionTokens };
}

/** Indexes in `history` where executions start (the cut points a compaction may use). */
export function turnStarts(history: readonly Event[]): number[] {
  const starts: number[] = [];
  history.forEach((e, i) => {
    if (e.kind === EventKind.EVENT_EXECUTION_START) starts.push(i);
  });
  return starts;
}
