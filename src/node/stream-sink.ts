// The node side of one Connect stream as an EventSink: one Event per sink call, blocking calls answered
// by correlated ControllerFrames. Invariant: a reply is accepted only with the turn's execution_id and
// the id the call minted, request/reply pairs never interleave, and the first failure is sticky.
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { EventKind, EventSchema, MessageSchema } from "../gen/agentsessions/v1/common_pb.js";
import type { Event, ToolCall, ToolResult, Usage } from "../gen/agentsessions/v1/common_pb.js";
import type { ControllerFrame } from "../gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { EventSink, ModelRequest, ModelResponse } from "../sdk/types.js";
import type { AsyncQueue } from "../wire/index.js";

type EventBody = MessageInitShape<typeof EventSchema>["body"];

export class StreamSink implements EventSink {
  readonly #executionId: string;
  readonly #events: AsyncQueue<Event>;
  readonly #replies: AsyncIterator<ControllerFrame>;
  readonly #turnSignal: AbortSignal;
  #failure: HostError | undefined;
  #closed = false;
  /** Serialises sends and request/reply pairs. */
  #lock: Promise<unknown> = Promise.resolve();

  constructor(executionId: string, events: AsyncQueue<Event>, replies: AsyncIterator<ControllerFrame>, turnSignal: AbortSignal) {
    this.#executionId = executionId;
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
      if (frame.frame.case !== "tool" || frame.frame.value.id !== call.id) {
        throw this.#latch(new HostError(ErrorCode.Internal, "tool result correlation mismatch"));
      }
      return frame.frame.value;
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

  #latch(err: unknown): HostError {
    if (this.#failure !== undefined) return this.#failure;
    const failure =
      err instanceof HostError ? err : new HostError(ErrorCode.Internal, err instanceof Error ? err.message : String(err), { cause: err });
    this.#failure = failure;
    return failure;
  }
}

function cancelled(signal: AbortSignal): HostError {
  const reason: unknown = signal.reason;
  return reason instanceof HostError ? reason : new HostError(ErrorCode.Cancelled, "turn cancelled", { cause: reason });
}
