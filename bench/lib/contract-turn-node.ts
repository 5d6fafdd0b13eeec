// The child side of contract-turn-shape: a grpc-js server whose Connect decodes ControllerFrames and
// answers with encoded Events as an echo harness node would — a Start with EVENT_MODEL_CALL (the
// input as the model request), the model result with EVENT_OUTPUT then EVENT_END, then the stream's
// end. Invariant: the contract's messages, protobuf-encoded; no actor table, history or harness code.
import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import { EventKind, EventSchema, type Event } from "../../src/gen/agentsessions/v1/common_pb.js";
import type { ControllerFrame } from "../../src/gen/agentsessions/v1/harness_pb.js";
import { CONTRACT_TURN_SERVICE } from "./contract-turn-shape.js";

const socket = process.argv[2];
if (!socket) throw new Error("usage: contract-turn-node.ts SOCKET");
const server = new Server();
server.addService(CONTRACT_TURN_SERVICE, {
  exec: () => undefined,
  connect: (call: ServerDuplexStream<ControllerFrame, Event>) => {
    call.on("data", (frame: ControllerFrame) => {
      const executionId = frame.executionId;
      switch (frame.frame.case) {
        case "start":
          call.write(
            create(EventSchema, {
              executionId,
              kind: EventKind.EVENT_MODEL_CALL,
              body: {
                case: "model",
                value: { model: "echo", id: randomBytes(8).toString("hex"), messages: frame.frame.value.inputs },
              },
            }),
          );
          return;
        case "model": {
          const message = frame.frame.value.message;
          call.write(
            create(EventSchema, {
              executionId,
              kind: EventKind.EVENT_OUTPUT,
              body: { case: "message", value: message ?? { role: "assistant" } },
            }),
          );
          call.write(
            create(EventSchema, {
              executionId,
              kind: EventKind.EVENT_END,
              body: { case: "end", value: { state: "COMPLETED" } },
            }),
          );
          call.end();
          return;
        }
        default:
          call.destroy(new Error(`unexpected frame ${String(frame.frame.case)}`));
      }
    });
  },
});
server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
  process.send?.(`unix://${socket}`);
});
process.on("disconnect", () => process.exit(0));
