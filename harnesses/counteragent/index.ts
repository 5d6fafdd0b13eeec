// The reference counter harness (wire-contract §7.2): its state is a plain number in RAM. Invariant
// (I4): the count is never rebuilt or reset from start.history — only a memory snapshot preserves it,
// which is why it declares REQUIRES_MEMORY_SNAPSHOT. It contains no snapshot code of its own.
import { create } from "@bufbuild/protobuf";
import { HarnessDescriptorSchema, Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import type { EventSink, Harness, HarnessDescriptor, StartInfo } from "../../src/sdk/types.js";

export class CounterAgent implements Harness {
  count = 0;

  describe(): HarnessDescriptor {
    return create(HarnessDescriptorSchema, {
      id: "counter",
      version: "1",
      capabilities: { resumability: Resumability.REQUIRES_MEMORY_SNAPSHOT, forkSafe: false },
    });
  }

  async run(_start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    this.count += 1;
    await sink.output(String(this.count), signal);
  }
}

export default function counterAgent(): Harness {
  return new CounterAgent();
}
