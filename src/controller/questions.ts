// Harness questions to the operator, carried as approval gates (docs/protocol.md §12.6). Invariants: a question is a
// REQUIRES_APPROVAL TOOL_CALL of tool "harnesshost.ask" whose call id and idempotency key derive only
// from the execution id and the question's index in the turn (so a re-driven turn asks the same
// call); its options are recorded in the call's args and enforced when the answer is committed.
import { create } from "@bufbuild/protobuf";
import { Mediation, ToolCallSchema, type ToolCall, type ToolResult } from "../gen/agentsessions/v1/common_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { AskAnswer, AskRequest } from "../harness/types.js";

export const ASK_TOOL = "harnesshost.ask";

export interface Question {
  readonly question: string;
  readonly choices: readonly string[];
  readonly allowFreeText: boolean;
}

/** The gated call a question travels as: call `ask-<n>`, key `<executionId>/ask-<n>`. */
export function askCall(executionId: string, index: number, q: AskRequest): ToolCall {
  if (q.question === "") throw new HostError(ErrorCode.InvalidArgument, "ask: the question is empty");
  const choices = [...(q.choices ?? [])];
  if (choices.length === 0 && q.allowFreeText === false) {
    throw new HostError(ErrorCode.InvalidArgument, "ask: a question without choices must allow free text");
  }
  return create(ToolCallSchema, {
    id: `ask-${index}`,
    tool: ASK_TOOL,
    mediation: Mediation.REQUIRES_APPROVAL,
    idempotencyKey: `${executionId}/ask-${index}`,
    args: { question: q.question, choices, allow_free_text: q.allowFreeText ?? choices.length === 0 },
  });
}

/** The recorded question of an ask call. */
export function questionOf(call: ToolCall): Question {
  const args = call.args ?? {};
  const question = typeof args["question"] === "string" ? args["question"] : "";
  const raw = args["choices"];
  const choices = Array.isArray(raw) ? raw.filter((c): c is string => typeof c === "string") : [];
  return { question, choices, allowFreeText: args["allow_free_text"] === true };
}

/** The answer a receipt carries: `output.answer` when answered, declined when denied. */
export function answerOf(result: ToolResult): AskAnswer {
  const answer = result.output?.["answer"];
  if (!result.isError && typeof answer === "string") return { text: answer, declined: false };
  return { text: "", declined: true };
}
