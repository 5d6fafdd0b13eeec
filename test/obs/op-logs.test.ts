// Operation logs (issue 19, logs): one request's lines from placement, the controller and the runtime
// all carry the request id, session uid, harness and execution id of that request — a scripted workload
// through a served host (gRPC, in process) on a spawned memory-tier harness, its log lines captured as
// JSON. A harness node's exit is logged with its code (a stop asked for: info) or its signal (a crash:
// warn), and the node started after a crash says it is a restart; an oversized id is clipped. Approve
// and Cancel write one placement line each carrying the request id and their outcome.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type ExecResult, type HarnessHostClient } from "../../src/client/index.js";
import type { Host } from "../../src/host/host.js";
import { createLog, NO_LOG, opLogger } from "../../src/obs/log.js";
import { RemoteHarness, serveHarness } from "../../src/node/index.js";
import { startServer, type RunningServer } from "../../src/server/server.js";
import { RecordingSink, ScriptedHarness, failureOf, startInfo } from "../node/fixtures.js";
import { closeAll, openTestHost, spawnedRuntimeOf } from "../tiers/helpers.js";

type Line = Record<string, unknown>;

const lines: Line[] = [];
let host: Host;
let server: RunningServer;
const clients: HarnessHostClient[] = [];

function client(requestId: string): HarnessHostClient {
  const c = connect({ address: server.addr, requestId });
  clients.push(c);
  return c;
}

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The execution id of a turn's records. */
function turnOf(result: ExecResult): string {
  return result.records.map((r) => r.event?.executionId ?? "").find((id) => id !== "") ?? "";
}

const PLACEMENT = ["turn admitted", "actor placed", "turn completed"];
const CONTROLLER = ["turn started", "turn ended"];

beforeAll(async () => {
  const logger = createLog({ level: "debug", sink: { write: (l) => lines.push(JSON.parse(l) as Line) } });
  // counter: the built-in memory-tier harness on the spawned runtime (every-turn checkpoints).
  // crashy: the same harness on a runtime (so a node) of its own, which the exit test stops and kills.
  host = await openTestHost(
    {
      nodeIdleMs: 0,
      harnesses: [{ name: "crashy", runtime: "spawned", target: "counter", checkpointPolicy: "every-turn" }],
    },
    { logger },
  );
  server = await startServer(host, { addr: "127.0.0.1:0", registryAddr: "127.0.0.1:0", httpAddr: "off", logger });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await server?.close(1000);
  await closeAll();
});

describe("operation logs", () => {
  it("placementControllerAndRuntimeLinesCarryTheRequestsIds", async () => {
    const requestId = "op-logs-request-0001";
    const sessions = client(requestId).sessions;
    const session = (await sessions.create({ harness: "counter" })).metadata?.uid ?? "";
    expect(session).not.toBe("");
    const result = await sessions.exec({ session, input: "go" }).result();
    expect(result.outputs).toEqual(["1"]);
    const turn = turnOf(result);
    expect(turn).not.toBe("");

    const ours = lines.filter((l) => l["request_id"] === requestId && l["turn"] === turn);
    const ids = { request_id: requestId, session, harness: "counter", turn };
    for (const msg of [...PLACEMENT, ...CONTROLLER, "harness node started", "actor snapshot taken"]) {
      const line = ours.find((l) => l["msg"] === msg);
      expect(line, `${msg}: ${JSON.stringify(lines.map((l) => l["msg"]))}`).toMatchObject(ids);
    }
    // The runtime's lines say which runtime; the node's start names its process.
    expect(ours.find((l) => l["msg"] === "harness node started")).toMatchObject({ runtime: "spawned" });
    expect(typeof ours.find((l) => l["msg"] === "harness node started")?.["pid"]).toBe("number");
    expect(ours.find((l) => l["msg"] === "turn ended")).toMatchObject({ outcome: "completed", level: 20 });
    // The RPC's own line carries the same request id.
    expect(lines.some((l) => l["msg"] === "rpc finished" && l["request_id"] === requestId)).toBe(true);
  });

  it("approveCancelAndDeleteThroughServeLogAPlacementLineWithTheRequestsId", async () => {
    // Approve: a session parked at the built-in "ask" harness's gate, decided by a client with its own id.
    const parked = await client("op-logs-request-0004").sessions.exec({ harness: "ask", input: "hello" }).result();
    const session = parked.session.metadata?.uid ?? "";
    const gate = parked.session.pendingApproval;
    expect(gate).toBeDefined();
    const decided = await client("op-logs-approve-0001").sessions.approve({ session });
    expect(decided.approved).toBe(true);
    const approveLine = lines.find((l) => l["msg"] === "wait decided" && l["request_id"] === "op-logs-approve-0001");
    expect(approveLine, JSON.stringify(lines.map((l) => l["msg"]))).toMatchObject({
      level: 30,
      operation: "approve",
      outcome: "approved",
      existing: false,
      session,
      harness: "ask",
      turn: gate?.executionId,
      request_seq: Number(gate?.requestSeq),
    });

    // Cancel: a second parked session's wait is withdrawn by a client with its own id.
    const other = await client("op-logs-request-0005").sessions.exec({ harness: "ask", input: "hello" }).result();
    const otherSession = other.session.metadata?.uid ?? "";
    await client("op-logs-cancel-0001").sessions.cancel({ session: otherSession, reason: "test" });
    expect(
      lines.find((l) => l["msg"] === "session cancelled" && l["request_id"] === "op-logs-cancel-0001"),
    ).toMatchObject({ level: 30, operation: "cancel", outcome: "withdrawn", session: otherSession, harness: "ask" });

    // Delete: the cancelled session is deleted by a client with its own id.
    await client("op-logs-delete-0001").sessions.delete(otherSession);
    expect(
      lines.find((l) => l["msg"] === "session deleted" && l["request_id"] === "op-logs-delete-0001"),
    ).toMatchObject({ level: 30, operation: "delete", outcome: "deleted", session: otherSession, harness: "ask" });
  });

  it("aNodeExitIsLoggedWithItsCodeAndACrashWithItsSignal", async () => {
    const sessions = client("op-logs-request-0002").sessions;
    const session = (await sessions.create({ harness: "crashy" })).metadata?.uid ?? "";
    await sessions.exec({ session, input: "go" }).result();
    const pid = spawnedRuntimeOf(host, "crashy").currentNode?.pid;
    expect(pid).toBeGreaterThan(0);
    // Suspend frees the actor; with nodeIdleMs 0 the idle node is stopped and exits on its own.
    await sessions.suspend(session);
    const exited = (): Line | undefined => lines.find((l) => l["msg"] === "harness node exited" && l["pid"] === pid);
    await until("the node's exit line", () => exited() !== undefined);
    expect(exited()).toMatchObject({ level: 30, code: 0, harness: "crashy", runtime: "spawned", sessions: 0 });

    // A crash: the node is killed under a live actor — a warn with the signal; the next node is a restart.
    await sessions.exec({ session, input: "go" }).result();
    const node = spawnedRuntimeOf(host, "crashy").currentNode!;
    node.kill();
    const crashed = (): Line | undefined =>
      lines.find((l) => l["msg"] === "harness node exited" && l["pid"] === node.pid);
    await until("the crashed node's exit line", () => crashed() !== undefined);
    expect(crashed()).toMatchObject({ level: 40, code: null, signal: "SIGKILL", sessions: 1 });
    const again = await client("op-logs-request-0003").sessions.exec({ session, input: "go" }).result();
    expect(again.outputs).toEqual(["3"]);
    expect(
      lines.find((l) => l["msg"] === "harness node restarted" && l["request_id"] === "op-logs-request-0003"),
    ).toMatchObject({ session, harness: "crashy", turn: turnOf(again), restart: true });
  });

  it("anOversizedIdIsClippedAndAnOffLevelBuildsNothing", () => {
    const out: Line[] = [];
    const log = createLog({ level: "info", sink: { write: (l) => out.push(JSON.parse(l) as Line) } });
    const long = "s".repeat(1000);
    let bound = 0;
    const op = opLogger(log, { session: long, harness: "h", requestId: "r", executionId: "t" }, 16);
    // Off level: the fields thunk is never read.
    op.child({
      get probe() {
        bound += 1;
        return 1;
      },
    }).debug({}, "never written");
    expect(bound).toBe(0);
    op.info({}, "written");
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({
      session: `${"s".repeat(16)}…(1000 chars)`,
      harness: "h",
      request_id: "r",
      turn: "t",
    });
    expect(NO_LOG.child({}).isLevelEnabled("error")).toBe(false);
  });

  it("aFailedTurnIsLoggedOnBothSidesOfTheNodeWithTheSameIds", async () => {
    const nodeLines: Line[] = [];
    const hostLines: Line[] = [];
    const node = await serveHarness(() => new ScriptedHarness(), {
      listen: "127.0.0.1:0",
      logger: createLog({ level: "info", sink: { write: (l) => nodeLines.push(JSON.parse(l) as Line) } }),
    });
    const hostLog = createLog({ level: "info", sink: { write: (l) => hostLines.push(JSON.parse(l) as Line) } });
    const remote = new RemoteHarness({
      address: node.address,
      session: "s-node-logs",
      log: hostLog.child({ session: "s-node-logs" }),
    });
    try {
      const start = startInfo("00000000000000aa", "throw", { requestId: "op-logs-node-0001" });
      await failureOf(remote.run(start, new RecordingSink(), new AbortController().signal));
      const ids = { request_id: "op-logs-node-0001", session: "s-node-logs", turn: "00000000000000aa" };
      expect(nodeLines.find((l) => l["msg"] === "turn failed")).toMatchObject({ level: 40, ...ids });
      expect(hostLines.find((l) => l["msg"] === "node call failed")).toMatchObject({
        level: 40,
        call: "Harness.Connect",
        ...ids,
      });
    } finally {
      remote.close();
      await node.close();
    }
  });
});
