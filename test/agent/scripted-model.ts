// A scripted in-process model provider for agent-kit tests: each invocation takes the next scripted
// step (a reply message or a thrown error); every request is kept so a test can read what the agent sent.
import { create, type JsonObject } from "@bufbuild/protobuf";
import { MessageSchema, type Message } from "../../src/gen/agentsessions/v1/common_pb.js";
import { textMessage } from "../../src/model/text.js";
import type { InvokeOptions, ModelProvider, ModelRequest, ModelResponse } from "../../src/model/types.js";

export type Step = Message | Error | ((req: ModelRequest, opts: InvokeOptions) => Promise<Message> | Message);

export function say(text: string): Message {
  return textMessage("assistant", text);
}

/** An assistant message calling tools: [name, args, id?]… */
export function calls(...list: [string, JsonObject, string?][]): Message {
  return create(MessageSchema, {
    role: "assistant",
    parts: list.map(([tool, args, id], i) => ({
      part: { case: "toolCall" as const, value: { id: id ?? `call_${i}`, tool, args } },
    })),
  });
}

export class ScriptedModel implements ModelProvider {
  readonly name = "scripted";
  readonly requests: ModelRequest[] = [];
  readonly options: InvokeOptions[] = [];
  constructor(
    private readonly steps: Step[] = [],
    /** Answer when the script is used up. */
    private readonly fallback: (req: ModelRequest) => Message = () => say("done"),
  ) {}

  push(...steps: Step[]): this {
    this.steps.push(...steps);
    return this;
  }

  get calls(): number {
    return this.requests.length;
  }

  async invoke(request: ModelRequest, opts: InvokeOptions): Promise<ModelResponse> {
    this.requests.push(request);
    this.options.push(opts);
    const step = this.steps.shift();
    if (step === undefined) return { message: this.fallback(request) };
    if (step instanceof Error) throw step;
    if (typeof step === "function") return { message: await step(request, opts) };
    return { message: step };
  }
}
