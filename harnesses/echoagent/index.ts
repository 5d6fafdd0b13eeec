// The reference echo harness (wire-contract §7.1). Invariant: one turn makes exactly one model call,
// with the last input's text, and nothing else; history is ignored, so it replays from the journal.
import { create } from "@bufbuild/protobuf";
import { HarnessDescriptorSchema, Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { messageText, textMessage } from "../../src/model/text.js";
import type { EventSink, Harness, HarnessDescriptor, StartInfo } from "../../src/harness/types.js";

export class EchoAgent implements Harness {
  describe(): HarnessDescriptor {
    return create(HarnessDescriptorSchema, {
      id: "echo",
      version: "1",
      models: ["echo"],
      capabilities: { resumability: Resumability.STATELESS_REPLAY, forkSafe: true },
    });
  }

  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    const text = messageText(start.inputs[start.inputs.length - 1]);
    await sink.model({ model: "echo", messages: [textMessage("user", text)] }, signal);
  }
}

export default function echoAgent(): Harness {
  return new EchoAgent();
}
