// An example memory-tier harness (docs/harness-authoring.md): it counts words across turns in an
// ordinary Map. Invariant (I4): the counts live only in RAM and are never rebuilt from start.history,
// so the harness declares REQUIRES_MEMORY_SNAPSHOT and the host restores them from a memory snapshot.
import { create, HarnessDescriptorSchema, Resumability, textOf } from "harnesshost/sdk";
import type { EventSink, Harness, HarnessDescriptor, StartInfo } from "harnesshost/sdk";

export class Tally implements Harness {
  /** Word → times seen in this session. Plain data: the snapshot codec captures it as is. */
  counts = new Map<string, number>();
  /** Words seen in this session, all turns together. */
  total = 0;

  describe(): HarnessDescriptor {
    return create(HarnessDescriptorSchema, {
      id: "tally",
      version: "1",
      capabilities: { resumability: Resumability.REQUIRES_MEMORY_SNAPSHOT, forkSafe: false },
    });
  }

  /** Counts the words of the last input; reports each one's running count and the session's total. */
  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    const words = textOf(start.inputs.at(-1))
      .toLowerCase()
      .split(/\s+/)
      .filter((w) => w !== "");
    for (const word of words) this.counts.set(word, (this.counts.get(word) ?? 0) + 1);
    this.total += words.length;
    const counted = [...new Set(words)].map((w) => `${w}=${this.counts.get(w) ?? 0}`);
    await sink.output(`${counted.join(" ")} (${this.total} words)`, signal);
  }
}

export default function tally(): Harness {
  return new Tally();
}
