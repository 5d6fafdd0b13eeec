// The reference counter harness (wire-contract §7.2): its state is a plain number in RAM. Invariant
// (I4): the count is never rebuilt or reset from start.history — only a memory snapshot preserves it,
// which is why it declares REQUIRES_MEMORY_SNAPSHOT. It contains no snapshot code of its own. The
// input "random" alone is answered `random:<uuid>` drawn through the SDK's per-copy randomness
// (freshRandomUUID), without counting: the memory.fork-randomness probe.
import { create } from "@bufbuild/protobuf";
import { HarnessDescriptorSchema, Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { textOf } from "../../src/controller/events.js";
import { freshRandomUUID } from "../../src/harness/fresh-random.js";
import type { EventSink, Harness, HarnessDescriptor, StartInfo } from "../../src/harness/types.js";

/** The randomness probe (conformance check memory.fork-randomness): answered with a fresh value, uncounted. */
export const RANDOM_PROBE = "random";

export class CounterAgent implements Harness {
  count = 0;

  describe(): HarnessDescriptor {
    return create(HarnessDescriptorSchema, {
      id: "counter",
      version: "1",
      capabilities: { resumability: Resumability.REQUIRES_MEMORY_SNAPSHOT, forkSafe: false },
    });
  }

  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    if (start.inputs.length === 1 && start.inputs[0] && textOf(start.inputs[0]) === RANDOM_PROBE) {
      await sink.output(`random:${freshRandomUUID()}`, signal);
      return;
    }
    this.count += 1;
    await sink.output(String(this.count), signal);
  }
}

export default function counterAgent(): Harness {
  return new CounterAgent();
}
