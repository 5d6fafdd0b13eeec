// Shared fixtures for controller tests: a counting model, small harnesses, a journal.
import { create } from "@bufbuild/protobuf";
import { MessageSchema, type Message } from "../../src/gen/agentsessions/v1/common_pb.js";
import { HarnessDescriptorSchema } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import type { HarnessBinding } from "../../src/controller/index.js";
import { textMessage, textOf } from "../../src/controller/index.js";
import type { ModelProvider } from "../../src/model/types.js";
import type { EventSink, Harness, ModelRequest, ModelResponse, StartInfo } from "../../src/harness/types.js";

/** Answers "echo:<last text>" and counts invocations; `fail` makes the next n calls throw. */
export class CountingModel implements ModelProvider {
  readonly name = "counting-echo";
  calls = 0;
  failNext = 0;
  reply?: (req: ModelRequest) => Message;
  async invoke(
    request: ModelRequest,
    opts: { signal?: AbortSignal; onDelta?: (c: string) => void },
  ): Promise<ModelResponse> {
    this.calls++;
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error("provider down");
    }
    if (this.reply) return { message: this.reply(request) };
    const text = `echo:${textOf(request.messages.at(-1))}`;
    opts.onDelta?.(text);
    return { message: textMessage("assistant", text) };
  }
}

export function descriptor(id: string, resumability = Resumability.STATELESS_REPLAY, version = "1") {
  return create(HarnessDescriptorSchema, { id, version, capabilities: { resumability, forkSafe: true } });
}

export function bind(harness: Harness, name = "test"): HarnessBinding {
  return { harness, name, descriptor: descriptor(name) };
}

export function user(text: string): Message {
  return textMessage("user", text);
}

/** A harness whose run body is given inline. */
export function harnessOf(
  run: (start: StartInfo, sink: EventSink, signal: AbortSignal) => Promise<void>,
  id = "test",
): Harness {
  return { describe: () => descriptor(id), run };
}

/** The echo behaviour: one model call on the last input. */
export const echoRun = async (start: StartInfo, sink: EventSink) => {
  const last = start.inputs.at(-1);
  await sink.model({ model: "echo", messages: [create(MessageSchema, { role: "user", parts: last?.parts ?? [] })] });
};
