// Realistic echo-turn traffic for the journal figures. Invariant: the events are exactly what the
// controller journals for one echo turn (EXECUTION_START, INPUT, MODEL_CALL, OUTPUT, END, with a
// matching model-input hash), so appending them in bulk builds a session a live host would accept.
import { create } from "@bufbuild/protobuf";
import { modelInputHash } from "../../src/canon/index.js";
import { ev, textMessage } from "../../src/controller/events.js";
import { newCallId, newExecutionId } from "../../src/controller/ids.js";
import { ModelCallSchema, type Event } from "../../src/gen/agentsessions/v1/common_pb.js";

const WORDS = [
  "alpha",
  "bravo",
  "charlie",
  "delta",
  "echo",
  "foxtrot",
  "golf",
  "hotel",
  "india",
  "juliet",
  "kilo",
  "lima",
];

/** A deterministic user prompt of about `chars` characters, different for each `i`. */
export function promptText(i: number, chars = 280): string {
  let text = `turn ${i}:`;
  let k = i;
  while (text.length < chars) {
    text += ` ${WORDS[k % WORDS.length] ?? "x"}`;
    k = (k * 7 + 3) % 1009;
  }
  return text;
}

/** The five events of one completed echo turn on `text`. */
export function echoTurnEvents(text: string): Event[] {
  const executionId = newExecutionId();
  const user = textMessage("user", text);
  const inputHash = modelInputHash(create(ModelCallSchema, { model: "echo", messages: [user] }));
  return [
    ev.executionStart(executionId, {
      inputCount: 1,
      harness: "echo",
      harnessVersion: "1",
      config: new Uint8Array(),
      resumeFromSeq: 0,
    }),
    ev.input(executionId, user),
    ev.modelCall(executionId, create(ModelCallSchema, { model: "echo", params: {}, inputHash, id: newCallId() })),
    ev.output(executionId, textMessage("assistant", `echo:${text}`)),
    ev.end(executionId),
  ];
}

/** `count` events made of whole echo turns (the last turn is cut short if count is not a multiple of 5). */
export function echoEventStream(count: number, startAt = 0): Event[] {
  const out: Event[] = [];
  for (let i = startAt; out.length < count; i++) {
    for (const e of echoTurnEvents(promptText(i))) {
      if (out.length < count) out.push(e);
    }
  }
  return out;
}
