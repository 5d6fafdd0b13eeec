// A scripted model provider for tests (the repository's own and authors', through harnesshost/testing):
// each invocation takes the next step of a script — a reply, a thrown error, or a function of the
// request — and every request is kept so a test can read what the harness sent. Invariants: steps are
// used strictly in order, one per call; a step's expectation that fails is kept and thrown again by
// `verify()`, so a failed assertion on a request cannot hide behind the turn error it causes; the
// script being used up is never silent unless a fallback was given.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { MessageSchema, type Message } from "../gen/agentsessions/v1/common_pb.js";
import { messageText, textMessage } from "./text.js";
import type { InvokeOptions, ModelProvider, ModelRequest, ModelResponse } from "./types.js";

/** One scripted answer: a message, an error to throw, or a function of the request that returns one. */
export type ScriptStep = Message | Error | ((req: ModelRequest, opts: InvokeOptions) => Promise<Message> | Message);

/** An assistant message with this text. */
export function say(text: string): Message {
  return textMessage("assistant", text);
}

/** An assistant message calling tools: [name, args, id?]… (ids default to `call_<index>`). */
export function calls(...list: [string, JsonObject, string?][]): Message {
  return create(MessageSchema, {
    role: "assistant",
    parts: list.map(([tool, args, id], i) => ({
      part: { case: "toolCall" as const, value: { id: id ?? `call_${i}`, tool, args } },
    })),
  });
}

/**
 * A step that first checks the request, then answers `reply`. `check` throws (any assertion library's
 * error) to fail; the failure is kept for `verify()` and the model call fails with it.
 */
export function expecting(check: (req: ModelRequest) => void, reply: Message): ScriptStep {
  return (req) => {
    check(req);
    return reply;
  };
}

/**
 * The text of a request's last message — what the harness just sent: the user's input, or a tool
 * result as its output's JSON (`error: …` for an error result: a denial, bad arguments, a failed run).
 */
export function lastText(req: ModelRequest): string {
  const last = req.messages.at(-1);
  if (!last) return "";
  const text = messageText(last);
  if (text !== "") return text;
  const found = last.parts.find((p) => p.part.case === "toolResult");
  if (found?.part.case !== "toolResult") return "";
  const result = found.part.value;
  return result.isError ? `error: ${result.error}` : JSON.stringify(result.output ?? {});
}

/** What to answer once the script is used up; default: fail the call (see ScriptedModel). */
export type Fallback = (req: ModelRequest) => Message;

export class ScriptExhaustedError extends Error {
  constructor(calls: number) {
    super(`scripted model: call ${calls} has no step left in the script (give more steps, or a fallback)`);
    this.name = "ScriptExhaustedError";
  }
}

export class ScriptedModel implements ModelProvider {
  readonly name = "scripted";
  /** Every request, in order. */
  readonly requests: ModelRequest[] = [];
  readonly options: InvokeOptions[] = [];
  /** Errors thrown by steps (failed expectations), in order. */
  readonly failures: unknown[] = [];
  private readonly steps: ScriptStep[];

  /**
   * @param fallback the answer once the script is used up. Default `say("done")`; pass `null` to make a
   *   call past the script fail (ScriptExhaustedError, also reported by `verify()`).
   */
  constructor(
    steps: readonly ScriptStep[] = [],
    private readonly fallback: Fallback | null = () => say("done"),
  ) {
    this.steps = [...steps];
  }

  push(...steps: ScriptStep[]): this {
    this.steps.push(...steps);
    return this;
  }

  /** How many calls the model has answered (or failed). */
  get calls(): number {
    return this.requests.length;
  }

  /** Steps not used yet. */
  get remaining(): number {
    return this.steps.length;
  }

  /** Throws the first failed expectation, or when steps are left unused; returns the number of calls. */
  verify(): number {
    const failed = this.failures[0];
    if (failed !== undefined) throw failed;
    if (this.steps.length > 0)
      throw new Error(`scripted model: ${this.steps.length} step(s) never used after ${this.calls} call(s)`);
    return this.calls;
  }

  async invoke(request: ModelRequest, opts: InvokeOptions): Promise<ModelResponse> {
    this.requests.push(request);
    this.options.push(opts);
    const step = this.steps.shift();
    if (step === undefined) {
      if (this.fallback === null) {
        const err = new ScriptExhaustedError(this.calls);
        this.failures.push(err);
        throw err;
      }
      return { message: this.fallback(request) };
    }
    if (step instanceof Error) throw step;
    if (typeof step === "function") {
      try {
        return { message: await step(request, opts) };
      } catch (err) {
        this.failures.push(err);
        throw err;
      }
    }
    return { message: step };
  }
}
