// The child side of raw-turn-shape: a grpc-js server whose Connect answers a start with one message
// (the model call), then the model result with one message (END) and the end of the stream. Invariant: bytes only, no protobuf.
import { Server, ServerCredentials, type ServerDuplexStream } from "@grpc/grpc-js";
import { RAW_TURN_SERVICE } from "./raw-turn-shape.js";

const socket = process.argv[2];
if (!socket) throw new Error("usage: raw-turn-node.ts SOCKET");
const server = new Server();
server.addService(RAW_TURN_SERVICE, {
  turn: () => undefined,
  connect: (call: ServerDuplexStream<Buffer, Buffer>) => {
    let n = 0;
    call.on("data", (msg: Buffer) => {
      n++;
      if (n === 1)
        call.write(msg); // MODEL_CALL
      else {
        call.write(msg); // END
        call.end();
      }
    });
  },
});
server.bindAsync(`unix://${socket}`, ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
  process.send?.(`unix://${socket}`);
});
process.on("disconnect", () => process.exit(0));
