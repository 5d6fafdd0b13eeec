// The node side of one Connect stream as an EventSink: one Event per sink call, blocking calls answered
// by correlated ControllerFrames. Invariant: a reply is accepted only with the turn's execution_id and
// the id the call minted, request/reply pairs never interleave, and the first failure is sticky. A
// gated call (REQUIRES_APPROVAL) is answered by a park (the turn must unwind: ApprovalParkedError, sticky)
// or by the decision followed by its receipt, which must match the decision.
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { EventKind, EventSchema, Mediation, MessageSchema } from "../gen/agentsessions/v1/common_pb.js";
import type { Event, ToolCall, ToolResult, Usage } from "../gen/agentsessions/v1/common_pb.js";
import type { ControllerFrame } from "../gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { ApprovalParkedError, attachDecision, receiptMatchesDecision } from "../controller/approvals.js";
import { answerOf, askCall } from "../controller/questions.js";
import type { AskAnswer, AskRequest, EventSink, ModelRequest, ModelResponse } from "../harness/types.js";
import type { AsyncQueue } from "../wire/index.js";

type EventBody = MessageInitShape<typeof EventSchema>["body"];

export class StreamSink implements EventSink {
  readonly #executionId: string;
  readonly #events: AsyncQueue<Event>;
  readonly #replies: AsyncIterator<ControllerFrame>;
  readonly #turnSignal: AbortSignal;
  readonly #session: string;
  #asks = 0;
  #failure: HostError | undefined;
  #closed = false;
  /** Serialises sends and request/reply pairs. */
  #lock: Promise<unknown> = Promise.resolve();

  constructor(
    executionId: string,
    events: AsyncQueue<Event>,
    replies: AsyncIterator<ControllerFrame>,
    turnSignal: AbortSignal,
    session = "",
  ) {
    this.#executionId = executionId;
    this.#session = session;
    this.#events = events;
    this.#replies = replies;
    this.#turnSignal = turnSignal;
  }

  /** The sticky failure, if any sink call failed. */
  get failure(): HostError | undefined {
    return this.#failure;
  }

  /** After the turn: later calls fail. */
  close(): void {
    this.#closed = true;
  }

  model(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
    return this.#exclusive(signal, async () => {
      const id = randomBytes(8).toString("hex");
      await this.#send(EventKind.EVENT_MODEL_CALL, {
        case: "model",
        value: {
          model: request.model,
          params: { ...(request.params ?? {}) },
          id,
          messages: [...request.messages],
          tools: [...(request.tools ?? [])],
          ...(request.toolChoice !== undefined ? { toolChoice: request.toolChoice } : {}),
        },
      });
      const frame = await this.#receive(signal);
      if (frame.frame.case !== "model" || frame.frame.value.modelCallId !== id) {
        throw this.#latch(new HostError(ErrorCode.Internal, "model result correlation mismatch"));
      }
      const result = frame.frame.value;
      const response: ModelResponse = {
        message: result.message ?? create(MessageSchema, { role: "assistant" }),
        ...(result.usage !== undefined ? { usage: result.usage } : {}),
      };
      return response;
    });
  }

  toolCall(call: ToolCall, signal?: AbortSignal): Promise<ToolResult> {
    return this.#exclusive(signal, async () => {
      await this.#send(EventKind.EVENT_TOOL_CALL, { case: "tool", value: call });
      const frame = await this.#receive(signal);
      if (call.mediation === Mediation.REQUIRES_APPROVAL) return this.#gated(call, frame, signal);
      if (frame.frame.case !== "tool" || frame.frame.value.id !== call.id) {
        throw this.#latch(new HostError(ErrorCode.Internal, "tool result correlation mismatch"));
      }
      return frame.frame.value;
    });
  }

  /** Asks the operator (a gated `harnesshost.ask` call); the turn parks until the answer is committed. */
  async ask(request: AskRequest, signal?: AbortSignal): Promise<AskAnswer> {
    const call = askCall(this.#executionId, this.#asks++, request);
    return answerOf(await this.toolCall(call, signal));
  }

  /** The host's answer to a gated call: park, or the decision then a matching receipt. */
  async #gated(call: ToolCall, frame: ControllerFrame, signal: AbortSignal | undefined): Promise<ToolResult> {
    const mismatch = (why: string): HostError =>
      this.#latch(new HostError(ErrorCode.Internal, `approval correlation mismatch: ${why}`));
    if (this.#session !== "" && frame.session !== "" && frame.session !== this.#session) throw mismatch("session");
    if (frame.frame.case === "park") {
      const ref = frame.frame.value;
      if (ref.executionId !== this.#executionId || ref.toolCallId !== call.id || ref.requestSeq <= 0n)
        throw mismatch("park tuple");
      throw this.#latch(
        new ApprovalParkedError({
          executionId: ref.executionId,
          toolCallId: ref.toolCallId,
          requestSeq: Number(ref.requestSeq),
        }),
      );
    }
    if (
      frame.frame.case !== "approval" ||
      frame.frame.value.toolCallId !== call.id ||
      frame.frame.value.requestSeq <= 0n
    )
      throw mismatch("decision");
    const decision = frame.frame.value;
    const next = await this.#receive(signal);
    if (next.frame.case !== "tool") throw mismatch("receipt expected after the decision");
    const receipt = next.frame.value;
    if (
      receipt.id !== call.id ||
      receipt.approvalRequestSeq !== decision.requestSeq ||
      receipt.approvalDecisionSeq <= 0n ||
      !receiptMatchesDecision(receipt, decision.approved)
    ) {
      throw mismatch("receipt does not match the decision");
    }
    return attachDecision(receipt, {
      toolCallId: call.id,
      approved: decision.approved,
      reason: decision.reason,
      requestSeq: Number(decision.requestSeq),
    });
  }

  output(text: string, signal?: AbortSignal): Promise<void> {
    return this.#exclusive(signal, () =>
      this.#send(EventKind.EVENT_OUTPUT, {
        case: "message",
        value: { role: "assistant", parts: [{ part: { case: "text", value: { text } } }] },
      }),
    );
  }

  report(result: ToolResult, signal?: AbortSignal): Promise<void> {
    return this.#exclusive(signal, () => this.#send(EventKind.EVENT_TOOL_RESULT, { case: "result", value: result }));
  }

  usage(usage: Usage, signal?: AbortSignal): Promise<void> {
    return this.#exclusive(signal, () => this.#send(EventKind.EVENT_USAGE, { case: "usage", value: usage }));
  }

  #exclusive<T>(signal: AbortSignal | undefined, op: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      this.#check(signal);
      try {
        return await op();
      } catch (err) {
        throw this.#latch(err);
      }
    };
    const result = this.#lock.then(run, run);
    this.#lock = result.catch(() => undefined);
    return result;
  }

  #check(signal: AbortSignal | undefined): void {
    if (this.#failure !== undefined) throw this.#failure;
    if (this.#closed) throw this.#latch(new HostError(ErrorCode.FailedPrecondition, "sink used after the turn ended"));
    for (const s of [this.#turnSignal, signal]) {
      if (s?.aborted === true) throw this.#latch(cancelled(s));
    }
  }

  async #send(kind: EventKind, body: EventBody): Promise<void> {
    await this.#events.send(create(EventSchema, { executionId: this.#executionId, kind, body }));
  }

  /** The next reply frame, or a failure when the turn or the call is cancelled first. */
  async #receive(signal: AbortSignal | undefined): Promise<ControllerFrame> {
    const signals = [this.#turnSignal, ...(signal !== undefined ? [signal] : [])];
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        const fired = signals.find((s) => s.aborted);
        reject(cancelled(fired ?? this.#turnSignal));
      };
      for (const s of signals) s.addEventListener("abort", onAbort, { once: true });
      if (signals.some((s) => s.aborted)) onAbort();
    });
    aborted.catch(() => undefined); // settled by the race below, or ignored after it
    try {
      const next = await Promise.race([this.#replies.next(), aborted]);
      if (next.done === true) {
        throw new HostError(ErrorCode.Internal, "controller closed the stream while the harness awaited a reply");
      }
      const frame = next.value;
      if (frame.executionId !== this.#executionId) {
        throw new HostError(ErrorCode.Internal, "result execution_id mismatch");
      }
      return frame;
    } finally {
      for (const s of signals) if (onAbort !== undefined) s.removeEventListener("abort", onAbort);
    }
  }

  /** The park the turn must unwind with, if the host parked it. */
  get parked(): ApprovalParkedError | undefined {
    return this.#failure instanceof ApprovalParkedError ? this.#failure : undefined;
  }

  #latch(err: unknown): HostError {
    if (this.#failure !== undefined) return this.#failure;
    const failure =
      err instanceof HostError
        ? err
        : new HostError(ErrorCode.Internal, err instanceof Error ? err.message : String(err), { cause: err });
    this.#failure = failure;
    return failure;
  }
}

function cancelled(signal: AbortSignal): HostError {
  const reason: unknown = signal.reason;
  return reason instanceof HostError ? reason : new HostError(ErrorCode.Cancelled, "turn cancelled", { cause: reason });
}
