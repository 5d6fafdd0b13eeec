// An Exec without inputs after a decision recovers the decided turn, as the reference's Exec does
// (issue 22 item 5, docs/migrating-from-go.md): its records stream like a turn's, the turn completes with
// the receipt, and nothing else is written; an Exec with inputs is still refused while the gate is open or
// decided (new input would orphan the turn).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, HarnessHostError, type HarnessHostClient } from "../../src/client/index.js";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Host } from "../../src/host/host.js";
import { startServer, type RunningServer } from "../../src/server/server.js";

let dir: string;
let host: Host;
let server: RunningServer;
let client: HarnessHostClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-inputless-"));
  host = await Host.open({ dataDir: dir, nodeIdleMs: 0 });
  server = await startServer(host, { addr: "127.0.0.1:0", registryAddr: "off", logger: pino({ level: "silent" }) });
  client = connect({ address: server.addr });
});

afterAll(async () => {
  client?.close();
  await server?.close(1000);
  await host?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof HarnessHostError) return err.status;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("Exec without inputs", () => {
  it("inputlessExecAfterADecisionRecoversTheTurn: streams the rest of the turn, like Resume", async () => {
    const parked = await client.sessions.exec({ harness: "ask", input: "hello" }).result();
    const session = parked.session.metadata?.uid ?? "";
    expect(parked.session.pendingApproval).toBeDefined();
    expect(await refusal(client.sessions.exec({ session, input: "more" }).result())).toBe("FAILED_PRECONDITION");
    await client.sessions.approve({ session });
    expect(await refusal(client.sessions.exec({ session, input: "more" }).result())).toBe("FAILED_PRECONDITION");
    const before = await client.sessions.get(session);

    const recovered = await client.sessions.exec({ session, input: [] }).result();
    expect(recovered.outputs.join("\n")).toContain("approved");
    const kinds = recovered.records.map((r) => r.event?.kind);
    // The receipt, the turn's OUTPUT and END, then the RESUME record — what Resume appends.
    expect(kinds).toEqual([
      EventKind.EVENT_TOOL_RESULT,
      EventKind.EVENT_OUTPUT,
      EventKind.EVENT_END,
      EventKind.EVENT_LIFECYCLE,
    ]);
    expect(recovered.records.every((r) => r.seq > before.lastSeq)).toBe(true);
    const after = await client.sessions.get(session);
    expect(after.pendingApproval).toBeUndefined();
    expect(after.lastSeq).toBe(recovered.records.at(-1)?.seq);

    // The turn is done: new input is accepted again (ask parks each turn on a new gate).
    const next = await client.sessions.exec({ session, input: "again" }).result();
    expect(Number(next.session.pendingApproval?.requestSeq)).toBeGreaterThan(Number(after.lastSeq));
  });
});
