// Drivers for the durable-wait tests: a host whose demo.write executions are counted, and one-line
// park / decide / resume helpers. Invariant: every Host opened here is closed by closeAll (afterEach).
import { join } from "node:path";
import { expect } from "vitest";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { textMessage, type ApprovalRef, type TurnResult } from "../../src/controller/index.js";
import { readDemoWrites } from "../../harnesses/ask/demo-write.js";
import type { Host } from "../../src/host/host.js";
import { records, signal } from "../tiers/helpers.js";

export async function newSession(host: Host, harness: string): Promise<string> {
  return (await host.createSession({ harness })).uid;
}

export async function execTurn(host: Host, session: string, text = "hello"): Promise<TurnResult> {
  return host.placer.exec({ session, inputs: [textMessage("user", text)], signal: signal() });
}

/** Runs a turn that must park; returns the gate it parked on. */
export async function parkTurn(host: Host, session: string, text = "hello"): Promise<ApprovalRef> {
  const result = await execTurn(host, session, text);
  expect(result.parked, `turn outputs ${JSON.stringify(result.outputs)}`).toBeDefined();
  return result.parked!;
}

export async function decide(host: Host, session: string, ref: ApprovalRef, approved: boolean, reason = "") {
  return host.placer.approve(session, { ...ref, approved, reason });
}

/** How many times demo.write really ran for a session. */
export function writesOf(host: Host, session: string): number {
  return readDemoWrites(join(host.config.dataDir, "demo-writes.jsonl")).filter((w) => w.session === session).length;
}

/** The kinds of a session's records, by name (e.g. "TOOL_CALL"). */
export async function kinds(host: Host, session: string): Promise<string[]> {
  return (await records(host, session)).map((r) =>
    r.event.body.case === "lifecycle"
      ? `LIFECYCLE_${r.event.body.value.kind === 1 ? "SUSPEND" : r.event.body.value.kind === 2 ? "RESUME" : "FORK"}`
      : (EventKind[r.event.kind] ?? "").replace("EVENT_", ""),
  );
}
