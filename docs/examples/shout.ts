// An example stateless harness (docs/harness-authoring.md): it asks the model to repeat the last input
// in capitals. Invariant: one turn is exactly one sink.model call whose request depends only on the
// turn's inputs, so the host can replay it from the journal (STATELESS_REPLAY).
import { create, HarnessDescriptorSchema, Resumability, textMessage, textOf } from "harnesshost/sdk";
import type { EventSink, Harness, HarnessDescriptor, StartInfo } from "harnesshost/sdk";

export class Shout implements Harness {
  describe(): HarnessDescriptor {
    return create(HarnessDescriptorSchema, {
      id: "shout",
      version: "1",
      models: ["echo"],
      capabilities: { resumability: Resumability.STATELESS_REPLAY, forkSafe: true },
    });
  }

  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    const last = textOf(start.inputs.at(-1));
    // The completion is journaled by the host as OUTPUT; do not repeat it with sink.output.
    await sink.model(
      {
        model: "echo",
        messages: [
          textMessage("system", "Repeat the user's message exactly."),
          textMessage("user", last.toUpperCase()),
        ],
      },
      signal,
    );
  }
}

/** A harness module's default export is its factory: one instance per session. */
export default function shout(): Harness {
  return new Shout();
}
