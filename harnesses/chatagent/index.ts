// The reference chat harness (wire-contract §7.3). Invariant: the model sees the whole conversation —
// the optional system prompt, then every INPUT and OUTPUT message of the history in journal order,
// then this turn's inputs — so the turn is a pure function of the journal and replays exactly.
import { create } from "@bufbuild/protobuf";
import { z } from "zod";
import { EventKind, type Message } from "../../src/gen/agentsessions/v1/common_pb.js";
import { HarnessDescriptorSchema, Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { textMessage } from "../../src/model/text.js";
import type { EventSink, Harness, HarnessDescriptor, StartInfo } from "../../src/sdk/types.js";

const ChatConfig = z.object({ system_prompt: z.string().optional() });

/** Parses the per-execution config: empty means none; anything but a JSON object of the schema throws. */
export function parseChatConfig(config: Uint8Array): z.infer<typeof ChatConfig> {
  if (config.length === 0) return {};
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(config));
  } catch (err) {
    throw new Error("chat config is not valid JSON", { cause: err });
  }
  const parsed = ChatConfig.safeParse(json);
  if (!parsed.success) throw new Error(`chat config is invalid: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export class ChatAgent implements Harness {
  readonly model: string;

  constructor(opts: { model?: string } = {}) {
    this.model = opts.model ?? "echo";
  }

  describe(): HarnessDescriptor {
    return create(HarnessDescriptorSchema, {
      id: "chat",
      version: "1",
      models: [this.model],
      capabilities: { resumability: Resumability.STATELESS_REPLAY, forkSafe: true },
    });
  }

  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    const config = parseChatConfig(start.config);
    const messages: Message[] = [];
    if (config.system_prompt !== undefined && config.system_prompt !== "") {
      messages.push(textMessage("system", config.system_prompt));
    }
    for (const event of start.history) {
      const conversational = event.kind === EventKind.EVENT_INPUT || event.kind === EventKind.EVENT_OUTPUT;
      if (conversational && event.body.case === "message") messages.push(event.body.value);
    }
    messages.push(...start.inputs);
    await sink.model({ model: this.model, messages }, signal);
  }
}

export default function chatAgent(): Harness {
  return new ChatAgent();
}
