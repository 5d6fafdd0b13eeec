// Malformed harness-node behaviour (docs/protocol.md §4.5, §4.7): a remote node that sends a foreign execution id, a
// host-only event kind, a garbage frame, closes without END, or never answers makes the turn fail
// cleanly (a documented error, an intact chain, nothing but the turn's own records) and the session
// stays resumable: once the node behaves, Resume re-drives the turn to END.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Server, type ServerDuplexStream } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textMessage } from "../../src/controller/events.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { EventKind, EventSchema, type Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import {
  Harness as HarnessService,
  HarnessDescriptorSchema,
  Resumability,
  type ControllerFrame,
} from "../../src/gen/agentsessions/v1/harness_pb.js";
import type { Host } from "../../src/host/host.js";
import { projectExecutions } from "../../src/projection/session-log.js";
import { listen, serviceDefinition } from "../../src/wire/index.js";
import { closeAll, expectChainVerifies, openTestHost } from "../tiers/helpers.js";

type Mode = "good" | "foreign-id" | "host-only" | "garbage" | "no-end" | "never";
let mode: Mode = "good";
const sockDir = mkdtempSync(join(tmpdir(), "hh-badnode-"));
let server: Server;
let host: Host;

function event(init: MessageInitShape<typeof EventSchema>): Event {
  return create(EventSchema, init);
}

/** One turn of the fake node: OUTPUT "before" (always), then whatever the current mode does. */
function connect(call: ServerDuplexStream<ControllerFrame, Event | Buffer>): void {
  let started = false;
  call.on("data", (frame: ControllerFrame) => {
    if (started) return;
    started = true;
    const executionId = frame.executionId;
    call.write(
      event({
        executionId,
        kind: EventKind.EVENT_OUTPUT,
        body: { case: "message", value: textMessage("assistant", "before") },
      }),
    );
    switch (mode) {
      case "good":
        call.write(
          event({ executionId, kind: EventKind.EVENT_END, body: { case: "end", value: { state: "COMPLETED" } } }),
        );
        call.end();
        return;
      case "foreign-id":
        call.write(
          event({
            executionId: "ffffffffffffffff",
            kind: EventKind.EVENT_OUTPUT,
            body: { case: "message", value: textMessage("assistant", "x") },
          }),
        );
        return;
      case "host-only":
        call.write(event({ executionId, kind: EventKind.EVENT_LIFECYCLE, body: { case: "lifecycle", value: {} } }));
        return;
      case "garbage":
        call.write(Buffer.from([0xff, 0xff, 0xff, 0x0f, 0x01]));
        return;
      case "no-end":
        call.end();
        return;
      case "never":
        return;
      default: {
        const exhaustive: never = mode;
        throw new Error(`unknown mode ${String(exhaustive)}`);
      }
    }
  });
  call.on("error", () => undefined);
}

beforeAll(async () => {
  const def = serviceDefinition(HarnessService) as Record<string, { responseSerialize: (v: unknown) => Buffer }>;
  const connectDef = def["connect"]!;
  const encode = connectDef.responseSerialize;
  def["connect"] = { ...connectDef, responseSerialize: (v: unknown) => (Buffer.isBuffer(v) ? v : encode(v)) };
  server = new Server();
  server.addService(def as never, {
    describe: (_call: unknown, cb: (err: null, res: unknown) => void) =>
      cb(
        null,
        create(HarnessDescriptorSchema, {
          id: "fake",
          version: "1",
          capabilities: { resumability: Resumability.STATELESS_REPLAY },
        }),
      ),
    connect,
  });
  const address = await listen(server, `unix://${join(sockDir, "node.sock")}`);
  host = await openTestHost({ harnesses: [{ name: "fake", runtime: "remote", target: address }] });
});

afterAll(async () => {
  await closeAll();
  server?.forceShutdown();
  rmSync(sockDir, { recursive: true, force: true });
});

const FAULTS: readonly [Mode, ErrorCode][] = [
  ["foreign-id", ErrorCode.Internal],
  ["host-only", ErrorCode.Internal],
  ["garbage", ErrorCode.Internal],
  ["no-end", ErrorCode.Internal],
  ["never", ErrorCode.Cancelled],
];

describe("a misbehaving remote node", () => {
  for (const [fault, code] of FAULTS) {
    it(`${fault}: the turn fails ${code}, the chain verifies, and Resume re-drives it once the node behaves`, async () => {
      const session = (await host.createSession({ harness: "fake" })).uid;
      mode = fault;
      const stop = new AbortController();
      let caught: unknown;
      try {
        await host.placer.exec({
          session,
          inputs: [textMessage("user", "hi")],
          // "never": the caller gives up once the node's first event is durable (no timer involved).
          observer: {
            onRecord: (rec) => void (fault === "never" && rec.event.kind === EventKind.EVENT_OUTPUT && stop.abort()),
          },
          signal: stop.signal,
        });
      } catch (err) {
        caught = err;
      }
      expect(isHostError(caught), String(caught)).toBe(true);
      expect((caught as { code: string }).code).toBe(code);
      await expectChainVerifies(host, session);
      const failed = projectExecutions(await host.journal.readRange(session));
      expect(failed).toHaveLength(1);
      expect(failed[0]!.completed).toBe(false);
      expect(host.placer.guard.isBusy(session)).toBe(false);

      mode = "good";
      const resumed = await host.placer.resume(session, new AbortController().signal);
      expect(resumed.turn?.outputs).toEqual(["before"]);
      const after = projectExecutions(await host.journal.readRange(session));
      expect(after).toHaveLength(1);
      expect(after[0]!.completed).toBe(true);
      await expectChainVerifies(host, session);
    });
  }
});
