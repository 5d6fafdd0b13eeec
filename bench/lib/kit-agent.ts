// The agent-kit harness the agent_turn figure drives, as a harness module the host loads on the local
// runtime, plus the seeded history it runs on. Invariant: the module records, for every Start it
// receives, the encoded bytes of Start.history (what a node would be sent), and the seeded events are
// exactly what a kit agent's completed turns and compactions journal, so a live turn continues them.
import { create, toBinary } from "@bufbuild/protobuf";
import { agent } from "../../src/agent/index.js";
import { SESSION_TOTAL_USAGE } from "../../src/agent/conversation.js";
import { compactionMessage } from "../../src/projection/compaction.js";
import { ev, textMessage } from "../../src/controller/events.js";
import { COMPACT_PARAM } from "../../src/controller/host-params.js";
import { newCallId, newExecutionId } from "../../src/controller/ids.js";
import { EventSchema, ModelCallSchema, UsageSchema, type Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { Harness } from "../../src/harness/types.js";
import { promptText } from "./echo-turns.js";

/** Conversation messages after which the compacting agent compacts (a turn adds two). */
export const COMPACT_AFTER_MESSAGES = 40;

/** Bytes of Start.history of every turn the module's harnesses ran, in order. */
export const startBytes: number[] = [];

function measured(inner: Harness): Harness {
  return {
    describe: () => inner.describe(),
    run(start, sink, signal) {
      let bytes = 0;
      for (const e of start.history) bytes += toBinary(EventSchema, e).length;
      startBytes.push(bytes);
      return inner.run(start, sink, signal);
    },
  };
}

export function compactingAgent(): Harness {
  return measured(agent({ id: "kitc", model: "echo", compact: { afterMessages: COMPACT_AFTER_MESSAGES } }));
}

export function plainAgent(): Harness {
  return measured(agent({ id: "kitp", model: "echo" }));
}

/** The default export serves the compacting agent (the host loads modules by their default). */
export default compactingAgent;

function usage(model: string, input: number, output: number): Event {
  return ev.usage("", create(UsageSchema, { model, inputTokens: BigInt(input), outputTokens: BigInt(output) }));
}

/**
 * Events of `turns` completed kit turns on echo, with a compaction at the start of every turn whose
 * history reached the threshold when `compacting` (as the live agent would have done).
 */
export function seededTurns(turns: number, compacting: boolean): Event[] {
  const events: Event[] = [];
  let windowMessages = 0;
  let lastThrough = 0;
  const push = (e: Event, id: string): void => {
    e.executionId = id;
    events.push(e);
  };
  for (let t = 0; t < turns; t++) {
    const id = newExecutionId();
    const startSeq = events.length + 1;
    const text = promptText(t, 120);
    push(
      ev.executionStart(id, {
        inputCount: 1,
        harness: compacting ? "kitc" : "kitp",
        harnessVersion: "1",
        config: new Uint8Array(),
        resumeFromSeq: 0,
      }),
      id,
    );
    push(ev.input(id, textMessage("user", text)), id);
    if (compacting && windowMessages >= COMPACT_AFTER_MESSAGES) {
      const call = create(ModelCallSchema, {
        model: "echo",
        params: { [COMPACT_PARAM]: String(startSeq - 1 - lastThrough) },
        inputHash: "0".repeat(64),
        id: newCallId(),
      });
      push(ev.modelCall(id, call), id);
      push(
        ev.output(
          id,
          compactionMessage({
            summary: `summary through turn ${t}`,
            fromSeq: lastThrough + 1,
            throughSeq: startSeq - 1,
            inputHash: "0".repeat(64),
            model: "echo",
          }),
        ),
        id,
      );
      push(usage("echo", 500, 10), id);
      push(usage(SESSION_TOTAL_USAGE, 100 * t, 0), id);
      lastThrough = startSeq - 1;
      windowMessages = 0;
    }
    push(ev.modelCall(id, create(ModelCallSchema, { model: "echo", inputHash: "0".repeat(64), id: newCallId() })), id);
    push(ev.output(id, textMessage("assistant", `echo:${text}`)), id);
    push(usage("echo", 60, 32), id);
    push(ev.end(id), id);
    windowMessages += 2;
  }
  return events;
}
