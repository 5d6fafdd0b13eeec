// The budget part of an agent (docs/agents.md): steps per turn, model attempts, tokens per turn and
// per session. Invariants: a limit is a positive integer (or Infinity for "none") — a zero, negative or
// fractional limit is refused when the agent is built, never discovered mid-turn; token counts are a
// pure function of the journaled conversation (requests are hash-checked, completions served
// verbatim), so a replay counts exactly what the live turn counted and stops at the same point.
import { ErrorCode, HostError } from "../errors/index.js";
import type { Message } from "../gen/agentsessions/v1/common_pb.js";
import { ATTEMPTS_PARAM, BACKOFF_PARAM } from "../controller/host-params.js";

/** The budgets a turn can exhaust, as named in the journaled ERROR's description. */
export type BudgetKind = "steps_per_turn" | "tokens_per_turn" | "tokens_per_session";

export interface BudgetInit {
  /** Model calls of one turn's infer loop (compaction not counted). Default 16. */
  readonly stepsPerTurn?: number;
  /** Attempts of one model call, the first included (1..16); only expected failures are retried. Default 3. */
  readonly modelAttempts?: number;
  /** Upper bound of the first retry's backoff in ms (0..60000), doubling per attempt. Default 200. */
  readonly retryBackoffMs?: number;
  /** Estimated tokens (input + output) of one turn's model calls. Default: no limit. */
  readonly tokensPerTurn?: number;
  /** Estimated tokens of the whole session, compactions included. Default: no limit. */
  readonly tokensPerSession?: number;
  /** Tokens of a request's messages or a completion; default `estimateTokens` (UTF-16 length / 4). */
  readonly countTokens?: (messages: readonly Message[]) => number;
}

export interface Budget {
  readonly kind: "budget";
  readonly stepsPerTurn: number;
  readonly modelAttempts: number;
  readonly retryBackoffMs: number;
  readonly tokensPerTurn: number;
  readonly tokensPerSession: number;
  readonly countTokens: (messages: readonly Message[]) => number;
}

/** A turn that used up a budget: RESOURCE_EXHAUSTED, journaled as the turn's ERROR. */
export class BudgetExhaustedError extends HostError {
  constructor(
    readonly kind: BudgetKind,
    readonly limit: number,
    readonly used: number,
  ) {
    super(ErrorCode.ResourceExhausted, `agent budget exhausted: ${kind} (used ${used} of ${limit})`);
  }
}

/** Refused configuration of an agent part: INVALID_ARGUMENT at construction. */
export class AgentConfigError extends HostError {
  constructor(message: string) {
    super(ErrorCode.InvalidArgument, `agent: ${message}`);
  }
}

function limit(name: string, value: number | undefined, fallback: number, max = Number.POSITIVE_INFINITY): number {
  const v = value ?? fallback;
  if (v === Number.POSITIVE_INFINITY && max === Number.POSITIVE_INFINITY) return v;
  if (!Number.isInteger(v) || v < 1 || v > max)
    throw new AgentConfigError(
      `budget ${name} must be an integer from 1 to ${max === Number.POSITIVE_INFINITY ? "Infinity" : max}, got ${String(v)}`,
    );
  return v;
}

/** Rough tokens of some messages: every text, tool argument and tool result, UTF-16 units / 4, rounded up. */
export function estimateTokens(messages: readonly Message[]): number {
  let chars = 0;
  for (const m of messages) {
    for (const { part } of m.parts) {
      if (part.case === "text") chars += part.value.text.length;
      else if (part.case === "toolCall") chars += part.value.tool.length + JSON.stringify(part.value.args ?? {}).length;
      else if (part.case === "toolResult") {
        const r = part.value;
        chars += r.error.length + JSON.stringify(r.output ?? {}).length;
        for (const c of r.content) if (c.part.case === "text") chars += c.part.value.text.length;
      }
    }
  }
  return Math.ceil(chars / 4);
}

/** Builds a budget, refusing a zero (or otherwise invalid) limit at once. */
export function budget(init: BudgetInit = {}): Budget {
  const retryBackoffMs = init.retryBackoffMs ?? 200;
  if (!Number.isInteger(retryBackoffMs) || retryBackoffMs < 0 || retryBackoffMs > 60_000)
    throw new AgentConfigError(
      `budget retryBackoffMs must be an integer from 0 to 60000, got ${String(retryBackoffMs)}`,
    );
  return {
    kind: "budget",
    stepsPerTurn: limit("stepsPerTurn", init.stepsPerTurn, 16),
    modelAttempts: limit("modelAttempts", init.modelAttempts, 3, 16),
    retryBackoffMs,
    tokensPerTurn: limit("tokensPerTurn", init.tokensPerTurn, Number.POSITIVE_INFINITY),
    tokensPerSession: limit("tokensPerSession", init.tokensPerSession, Number.POSITIVE_INFINITY),
    countTokens: init.countTokens ?? estimateTokens,
  };
}

/** One turn's consumption against a budget. */
export class Meter {
  steps = 0;
  turnTokens = 0;
  constructor(
    readonly budget: Budget,
    /** Tokens the session used before this turn (from the history). */
    public sessionTokens: number,
  ) {}

  /** Throws when the next model call would start past a budget. */
  beforeModelCall(step: boolean): void {
    const b = this.budget;
    if (step && this.steps >= b.stepsPerTurn)
      throw new BudgetExhaustedError("steps_per_turn", b.stepsPerTurn, this.steps);
    if (this.turnTokens >= b.tokensPerTurn)
      throw new BudgetExhaustedError("tokens_per_turn", b.tokensPerTurn, this.turnTokens);
    if (this.sessionTokens >= b.tokensPerSession)
      throw new BudgetExhaustedError("tokens_per_session", b.tokensPerSession, this.sessionTokens);
    if (step) this.steps++;
  }

  /** Adds a call's tokens; returns the input and output counts for the turn's USAGE record. */
  charge(input: readonly Message[], output: Message): { input: number; output: number } {
    const i = this.budget.countTokens(input);
    const o = this.budget.countTokens([output]);
    this.turnTokens += i + o;
    this.sessionTokens += i + o;
    return { input: i, output: o };
  }

  /** The host params that make the host retry this call within the model-attempts budget. */
  params(): Record<string, string> {
    return {
      [ATTEMPTS_PARAM]: String(this.budget.modelAttempts),
      [BACKOFF_PARAM]: String(this.budget.retryBackoffMs),
    };
  }
}
