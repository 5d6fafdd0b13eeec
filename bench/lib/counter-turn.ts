// One counter turn for the suspend/resume profiling workloads. Invariant: every turn must continue the
// count (a cold boot or a double apply throws instead of being profiled as normal work).
import type { Host } from "../../src/host/host.js";
import { textMessage } from "../../src/model/text.js";

/** A function running the next counter turn of `session`, checking its answer. */
export function counterTurns(host: Host, session: string, signal: AbortSignal): () => Promise<void> {
  let expected = 0;
  return async () => {
    expected++;
    const r = await host.placer.exec({ session, inputs: [textMessage("user", "tick")], signal });
    if (r.outputs[0] !== String(expected))
      throw new Error(`counter answered ${JSON.stringify(r.outputs[0])}, expected ${expected}`);
  };
}
