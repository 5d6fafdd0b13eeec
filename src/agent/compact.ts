// The compact part (docs/agents.md, docs/protocol.md §16). Invariants: a compaction happens at the
// start of a turn whose history passed the threshold, and only then; it is one host-mediated model
// call carrying `harnesshost.compact` = the number of history events its summary replaces (whole turns
// from the window's start), which the host journals as the compaction record; every later turn's
// Start.history begins after the replaced range, so history and model input stay bounded however long
// the session runs. The summary request is a pure function of the history (replay serves it).
import type { Event, Message } from "../gen/agentsessions/v1/common_pb.js";
import { COMPACT_PARAM } from "../controller/host-params.js";
import { messageText, textMessage } from "../model/text.js";
import { AgentConfigError } from "./budget.js";
import { conversationOf, SESSION_TOTAL_USAGE, turnStarts, type Conversation } from "./conversation.js";
import { meteredModelCall } from "./infer.js";
import type { AgentContext } from "./parts.js";

export interface CompactInit {
  /** Compact once the history holds at least this many conversation messages. Default 40. */
  readonly afterMessages?: number;
  /** …or at least this many estimated tokens (summary included). Default: no token threshold. */
  readonly afterTokens?: number;
  /** The newest whole turns kept verbatim after the summary. Default 0. */
  readonly keepTurns?: number;
  /** The model that summarises; default the agent's. */
  readonly model?: string;
  /** The summariser's instruction. */
  readonly instructions?: string;
}

export interface Compacted {
  readonly summary: string;
  /** Messages the turn keeps after the summary. */
  readonly kept: readonly Message[];
}

/** The compact part: given the turn's history, maybe compacts it. */
export interface CompactPart {
  run(ctx: AgentContext, history: readonly Event[], conversation: Conversation): Promise<Compacted | undefined>;
}

export const DEFAULT_SUMMARY_INSTRUCTIONS =
  "Summarise the conversation below for yourself: keep every fact, decision, name, number and open task you will need later. Answer with the summary only.";

/** How a summary is shown to the model at the start of a request. */
export function summaryMessage(summary: string): Message {
  return textMessage("user", `Summary of the conversation so far:\n${summary}`);
}

function transcript(previous: string | undefined, messages: readonly Message[]): string {
  const lines: string[] = [];
  if (previous !== undefined) lines.push(`(earlier summary) ${previous}`);
  for (const m of messages) {
    const text = messageText(m);
    if (text !== "") lines.push(`${m.role}: ${text}`);
    for (const { part } of m.parts) {
      if (part.case === "toolCall")
        lines.push(`${m.role} called ${part.value.tool} ${JSON.stringify(part.value.args ?? {})}`);
      if (part.case === "toolResult") {
        const r = part.value;
        const body = r.isError ? `error: ${r.error}` : JSON.stringify(r.output ?? {});
        lines.push(
          `tool result: ${body}${r.content.map((c) => (c.part.case === "text" ? ` ${c.part.value.text}` : "")).join("")}`,
        );
      }
    }
  }
  return lines.join("\n");
}

function positive(name: string, v: number | undefined, fallback: number): number {
  const n = v ?? fallback;
  if (n === Number.POSITIVE_INFINITY) return n;
  if (!Number.isInteger(n) || n < 1)
    throw new AgentConfigError(`compact ${name} must be an integer >= 1, got ${String(n)}`);
  return n;
}

/** The stock compaction part. */
export function compact(init: CompactInit = {}): CompactPart {
  const afterMessages = positive("afterMessages", init.afterMessages, 40);
  const afterTokens = positive("afterTokens", init.afterTokens, Number.POSITIVE_INFINITY);
  const keepTurns = init.keepTurns ?? 0;
  if (!Number.isInteger(keepTurns) || keepTurns < 0)
    throw new AgentConfigError(`compact keepTurns must be an integer >= 0, got ${String(keepTurns)}`);
  const instructions = init.instructions ?? DEFAULT_SUMMARY_INSTRUCTIONS;
  return {
    async run(ctx, history, conversation) {
      const tokens =
        ctx.meter.budget.countTokens(conversation.messages) +
        (conversation.summary !== undefined ? ctx.meter.budget.countTokens([summaryMessage(conversation.summary)]) : 0);
      if (conversation.messages.length < afterMessages && tokens < afterTokens) return undefined;
      const starts = turnStarts(history);
      const cut = keepTurns === 0 ? history.length : (starts[starts.length - keepTurns] ?? 0);
      if (cut === 0) return undefined;
      const replaced = conversationOf(history.slice(0, cut));
      const kept = conversationOf(history.slice(cut)).messages;
      const request = [
        textMessage("system", instructions),
        textMessage("user", transcript(conversation.summary, replaced.messages)),
      ];
      const answer = await meteredModelCall(ctx, request, {
        step: false,
        ...(init.model !== undefined ? { model: init.model } : {}),
        params: { [COMPACT_PARAM]: String(cut) },
        offerTools: false,
      });
      // The session's total so far, so later windows (which no longer hold the replaced USAGE) count on.
      await ctx.sink.usage(
        {
          $typeName: "agentsessions.v1.Usage",
          model: SESSION_TOTAL_USAGE,
          inputTokens: BigInt(ctx.meter.sessionTokens),
          outputTokens: 0n,
          reasoningTokens: 0n,
        },
        ctx.signal,
      );
      return { summary: messageText(answer), kept };
    },
  };
}
