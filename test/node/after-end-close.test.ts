// docs/protocol.md §4.6: after END COMPLETED the host half-closes and lets the node finish the stream
// with OK instead of cancelling it; a node that keeps the stream open is cancelled after a bounded wait.
// run() returns at END; the stream finishes behind it, recorded in the SessionStreams the session's
// next node call waits on (item 9), so here the checks wait for that record, not for run().
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Client, InterceptingCall, Server, credentials } from "@grpc/grpc-js";
import type { Interceptor } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventKind } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { EventSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { Harness as HarnessService } from "../../src/gen/agentsessions/v1/harness_pb.js";
import type { ControllerFrame } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { RemoteHarness, serveHarness } from "../../src/node/index.js";
import { SessionStreams } from "../../src/node/stream-order.js";
import type { HarnessNode } from "../../src/node/index.js";
import { addService, listen, parseAddress } from "../../src/wire/index.js";
import type { CallContext } from "../../src/wire/index.js";
import { RecordingSink, ScriptedHarness, startInfo } from "./fixtures.js";

type EventInit = MessageInitShape<typeof EventSchema>;

const dir = mkdtempSync(join(tmpdir(), "hh-endclose-"));
let server: Server;
let address: string;
let sdkNode: HarnessNode;
const endings = new Map<string, Promise<"cancelled">>();

/** Sends END COMPLETED, then keeps the stream open until the host cancels it (reports that it did). */
async function* endThenLinger(frames: AsyncIterable<ControllerFrame>, ctx: CallContext): AsyncIterable<EventInit> {
  const first = await frames[Symbol.asyncIterator]().next();
  if (first.done === true) return;
  const { session, executionId } = first.value;
  endings.set(
    session,
    new Promise<"cancelled">((resolve) => {
      if (ctx.signal.aborted) resolve("cancelled");
      else ctx.signal.addEventListener("abort", () => resolve("cancelled"), { once: true });
    }),
  );
  yield { executionId, kind: EventKind.EVENT_END, body: { case: "end", value: { state: "COMPLETED" } } };
  await endings.get(session);
}

beforeAll(async () => {
  server = new Server();
  addService(server, HarnessService, { describe: () => ({ id: "end-watch" }), connect: endThenLinger });
  address = await listen(server, `unix://${join(dir, "node.sock")}`);
  sdkNode = await serveHarness(() => new ScriptedHarness(), { listen: `unix://${join(dir, "sdk.sock")}` });
});
afterAll(async () => {
  server.forceShutdown();
  await sdkNode.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What the host's side of each call did: half-closes, cancels and the final status codes. */
interface CallLog {
  halfCloses: number;
  cancels: number;
  statuses: number[];
}

/** A connection whose calls are logged (grpc-js client interceptor). */
function loggedConnection(target: string): { connection: Client; log: CallLog } {
  const log: CallLog = { halfCloses: 0, cancels: 0, statuses: [] };
  const interceptor: Interceptor = (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata, _listener, next) {
        next(metadata, {
          onReceiveStatus(status, nextStatus) {
            log.statuses.push(status.code);
            nextStatus(status);
          },
        });
      },
      halfClose(next) {
        log.halfCloses += 1;
        next();
      },
      cancel(next) {
        log.cancels += 1;
        next();
      },
    });
  return {
    connection: new Client(parseAddress(target).target, credentials.createInsecure(), { interceptors: [interceptor] }),
    log,
  };
}

describe("after END the host lets the node close the stream", () => {
  it("an SDK node's turn: the host half-closes after END, receives OK and never cancels", async () => {
    const { connection, log } = loggedConnection(sdkNode.address);
    const streams = new SessionStreams();
    const r = new RemoteHarness({ address: sdkNode.address, session: "sdk", connection, streams });
    try {
      for (let i = 0; i < 3; i++) {
        const sink = new RecordingSink();
        await r.run(
          startInfo(`00000000000000f${i}`, "count", { sessionUid: "sdk" }),
          sink,
          new AbortController().signal,
        );
        expect(sink.outputs()).toEqual([`count=${i + 1}`]);
      }
      await streams.ended(sdkNode.address, "sdk");
      expect(log).toEqual({ halfCloses: 3, cancels: 0, statuses: [0, 0, 0] });
    } finally {
      r.close();
      connection.close();
    }
  });

  it("cancels a node that keeps the stream open after END, once the bounded wait is over, and run() still resolves", async () => {
    const { connection, log } = loggedConnection(address);
    const streams = new SessionStreams();
    const r = new RemoteHarness({ address, session: "lingering", connection, streams });
    try {
      await r.run(
        startInfo("00000000000000e2", "go", { sessionUid: "lingering" }),
        new RecordingSink(),
        new AbortController().signal,
      );
      // The stream did not outlive the session's ending record: it was cancelled before that settled.
      await streams.ended(address, "lingering");
      expect(log.cancels).toBeGreaterThan(0);
      expect(await endings.get("lingering")).toBe("cancelled");
    } finally {
      r.close();
      connection.close();
    }
  });

  it("a failing turn is still cancelled (every failure path cancels)", async () => {
    const { connection, log } = loggedConnection(sdkNode.address);
    const r = new RemoteHarness({ address: sdkNode.address, session: "sdk-fail", connection });
    try {
      await expect(
        r.run(
          startInfo("00000000000000e3", "throw", { sessionUid: "sdk-fail" }),
          new RecordingSink(),
          new AbortController().signal,
        ),
      ).rejects.toThrow(/scripted failure/);
      expect(log.cancels).toBeGreaterThan(0);
    } finally {
      r.close();
      connection.close();
    }
  });
});
