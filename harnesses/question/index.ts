// The `question` example harness (stateless): each turn asks the operator which colour to use for the
// last input (red, green or blue, or any text) and reports the answer. Invariant: its only state is
// the journal — the question is the same on every re-drive of a turn, so the host serves the recorded
// answer on `resume` instead of asking twice.
import { create } from "@bufbuild/protobuf";
import { HarnessDescriptorSchema, Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { messageText } from "../../src/model/text.js";
import type { EventSink, Harness, HarnessDescriptor, StartInfo } from "../../src/harness/types.js";

export const COLOURS = ["red", "green", "blue"] as const;

export class QuestionAgent implements Harness {
  describe(): HarnessDescriptor {
    return create(HarnessDescriptorSchema, {
      id: "question",
      version: "1",
      capabilities: { resumability: Resumability.STATELESS_REPLAY, forkSafe: true },
    });
  }

  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    if (!sink.ask) throw new Error("the `question` harness needs a host that can ask the operator (sink.ask)");
    const subject = messageText(start.inputs[start.inputs.length - 1]);
    const answer = await sink.ask(
      { question: `which colour for ${JSON.stringify(subject)}?`, choices: [...COLOURS], allowFreeText: true },
      signal,
    );
    await sink.output(answer.declined ? `${subject}: no colour (declined)` : `${subject}: ${answer.text}`, signal);
  }
}

export default function questionAgent(): Harness {
  return new QuestionAgent();
}
