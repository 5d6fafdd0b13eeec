// The `askcounter` example harness (memory tier): the counter of `counter` plus the approval gate of
// `ask`. Invariant: the count lives only in RAM and is incremented before the gate — so it continues
// correctly only because a parked turn resumes from the snapshot of its starting state and is
// re-driven (serving its recorded gate), never from a snapshot taken mid-turn nor from history.
import { create } from "@bufbuild/protobuf";
import { HarnessDescriptorSchema, Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import type { EventSink, Harness, HarnessDescriptor, StartInfo } from "../../src/harness/types.js";
import { demoToolSpec, demoWrite, receiptWord } from "../ask/index.js";

export class AskCounterAgent implements Harness {
  count = 0;

  describe(): HarnessDescriptor {
    return create(HarnessDescriptorSchema, {
      id: "askcounter",
      version: "1",
      tools: [demoToolSpec()],
      capabilities: { resumability: Resumability.REQUIRES_MEMORY_SNAPSHOT, forkSafe: false },
    });
  }

  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    this.count += 1;
    const receipt = await sink.toolCall(demoWrite(start), signal);
    await sink.output(`${this.count} ${receiptWord(receipt)}`, signal);
  }
}

export default function askCounterAgent(): Harness {
  return new AskCounterAgent();
}
