// The park exchange over the Harness wire (wire-contract §8.4): the host answers a gated TOOL_CALL with
// `park`, the node unwinds and answers with exactly one matching EVENT_PARKED and no END; a decided
// call is answered with the decision then a receipt that must match it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ToolResultSchema,
  ToolResult_Code,
  type ToolCall,
  type ToolResult,
} from "../../src/gen/agentsessions/v1/common_pb.js";
import {
  ApprovalParkedError,
  attachDecision,
  deniedReceipt,
  isApprovalParked,
  textMessage,
} from "../../src/controller/index.js";
import { isHostError } from "../../src/errors/index.js";
import { RemoteHarness, serveHarness, type HarnessNode } from "../../src/node/index.js";
import type { EventSink, StartInfo } from "../../src/harness/types.js";
import askAgent from "../../harnesses/ask/index.js";

const dir = mkdtempSync(join(tmpdir(), "hh-wire-park-"));
let node: HarnessNode;
const remotes: RemoteHarness[] = [];
beforeAll(async () => {
  node = await serveHarness(askAgent, { listen: `unix://${join(dir, "node.sock")}` });
});
afterAll(async () => {
  for (const r of remotes) r.close();
  await node.close();
  rmSync(dir, { recursive: true, force: true });
});

const EXEC = "00000000000000aa";
function start(session: string): StartInfo {
  return {
    sessionUid: session,
    executionId: EXEC,
    config: new Uint8Array(),
    history: [],
    inputs: [textMessage("user", "hi")],
    resumeFromSeq: 0,
  };
}

/** A host-side sink whose toolCall answer is scripted; records outputs. */
function sink(toolCall: (call: ToolCall) => Promise<ToolResult>): EventSink & { outputs: string[]; calls: ToolCall[] } {
  const outputs: string[] = [];
  const calls: ToolCall[] = [];
  return {
    outputs,
    calls,
    model: () => Promise.reject(new Error("unused")),
    toolCall: (call) => {
      calls.push(call);
      return toolCall(call);
    },
    output: async (text) => void outputs.push(text),
    report: async () => undefined,
    usage: async () => undefined,
  };
}

function remote(session: string): RemoteHarness {
  const r = new RemoteHarness({ address: node.address, session });
  remotes.push(r);
  return r;
}

describe("park over the wire", () => {
  it("park → exactly one matching EVENT_PARKED, no END; run rethrows the park", async () => {
    const parked = new ApprovalParkedError({ executionId: EXEC, toolCallId: "w1", requestSeq: 4 });
    const s = sink(() => Promise.reject(parked));
    const err = await remote("s1")
      .run(start("s1"), s, new AbortController().signal)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isApprovalParked(err)).toBe(true);
    expect(err).toBe(parked);
    expect(s.calls.map((c) => c.tool)).toEqual(["demo.write"]);
    expect(s.outputs).toEqual([]);
  });

  it("a park naming another call is refused by the node: no EVENT_PARKED, the turn fails", async () => {
    const s = sink(() =>
      Promise.reject(new ApprovalParkedError({ executionId: EXEC, toolCallId: "other", requestSeq: 4 })),
    );
    const err = await remote("s2")
      .run(start("s2"), s, new AbortController().signal)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isHostError(err)).toBe(true);
    expect(isApprovalParked(err)).toBe(false);
  });

  it("a decided call: the decision then the receipt; the harness continues", async () => {
    const approved = sink(async (call) =>
      attachDecision(
        create(ToolResultSchema, {
          id: call.id,
          output: { written: true },
          approvalRequestSeq: 4n,
          approvalDecisionSeq: 6n,
        }),
        { toolCallId: call.id, approved: true, reason: "ok", requestSeq: 4 },
      ),
    );
    await remote("s3").run(start("s3"), approved, new AbortController().signal);
    expect(approved.outputs).toEqual(["receipt: approved"]);
    const denied = sink(async (call) =>
      attachDecision(deniedReceipt(call.id, 4, 6), { toolCallId: call.id, approved: false, reason: "", requestSeq: 4 }),
    );
    await remote("s4").run(start("s4"), denied, new AbortController().signal);
    expect(denied.outputs).toEqual(["receipt: denied"]);
  });

  it("a receipt that contradicts its decision fails the turn on the node", async () => {
    const s = sink(async (call) =>
      attachDecision(
        create(ToolResultSchema, {
          id: call.id,
          isError: true,
          code: ToolResult_Code.APPROVAL_DENIED,
          approvalRequestSeq: 4n,
          approvalDecisionSeq: 6n,
        }),
        {
          toolCallId: call.id,
          approved: true,
          reason: "",
          requestSeq: 4,
        },
      ),
    );
    await expect(remote("s5").run(start("s5"), s, new AbortController().signal)).rejects.toThrow(
      /approval correlation mismatch/,
    );
    expect(s.outputs).toEqual([]);
  });
});
