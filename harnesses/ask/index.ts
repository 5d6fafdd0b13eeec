// The `ask` example harness (stateless): each turn asks the operator to approve one `demo.write` of the
// last input, then reports the receipt. Invariant: its only state is the journal — the gated call's id
// and idempotency key derive from the execution id, so a re-driven turn makes the very same call and
// the host serves (or completes) it instead of writing twice.
import { create } from "@bufbuild/protobuf";
import {
  Mediation,
  ToolCallSchema,
  ToolResult_Code,
  type ToolResult,
} from "../../src/gen/agentsessions/v1/common_pb.js";
import { HarnessDescriptorSchema, Resumability } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { messageText } from "../../src/model/text.js";
import type { EventSink, Harness, HarnessDescriptor, StartInfo } from "../../src/harness/types.js";
import { DEMO_WRITE_TOOL } from "./demo-write.js";

/** "approved", "denied" or "failed" for a gate's receipt. */
export function receiptWord(result: ToolResult): string {
  if (result.code === ToolResult_Code.APPROVAL_DENIED) return "denied";
  return result.isError ? "failed" : "approved";
}

/** The one gated call of a turn. */
export function demoWrite(start: StartInfo) {
  return create(ToolCallSchema, {
    id: "w1",
    tool: DEMO_WRITE_TOOL,
    mediation: Mediation.REQUIRES_APPROVAL,
    idempotencyKey: `${start.executionId}/w1`,
    args: { text: messageText(start.inputs[start.inputs.length - 1]) },
  });
}

export function demoToolSpec() {
  return {
    name: DEMO_WRITE_TOOL,
    description: "writes the turn's input (needs an operator's approval)",
    mediation: Mediation.REQUIRES_APPROVAL,
  };
}

export class AskAgent implements Harness {
  describe(): HarnessDescriptor {
    return create(HarnessDescriptorSchema, {
      id: "ask",
      version: "1",
      tools: [demoToolSpec()],
      capabilities: { resumability: Resumability.STATELESS_REPLAY, forkSafe: true },
    });
  }

  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    const receipt = await sink.toolCall(demoWrite(start), signal);
    await sink.output(`receipt: ${receiptWord(receipt)}`, signal);
  }
}

export default function askAgent(): Harness {
  return new AskAgent();
}
