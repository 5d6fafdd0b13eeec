// The raw grpc-js floor of an echo turn's message pattern, with no protobuf, journal or host logic: a
// client opens a server stream to an in-process server, whose handler opens a bidi stream to a child
// process, sends a start, receives a "model call", answers it, receives the end event and the end of
// that stream, while streaming seven messages back to the client (Session, EXECUTION_START, INPUT,
// MODEL_CALL, the model's delta, OUTPUT, END). Invariant: the same transports
// and message count as the measured turn (Exec stream + Connect stream to a node), so the difference
// between the two is harnesshost's own work, not gRPC's. With `commitDb`, the handler also makes the
// turn's two durable commits in place (three rows before streaming EXECUTION_START…MODEL_CALL, two
// before OUTPUT and END) as raw better-sqlite3 transactions: the floor including the disk, paid at the
// moments the host pays it.
import { Client, Server, credentials, type ServerWritableStream, type ServiceDefinition } from "@grpc/grpc-js";
import { bindInsecure, bytesMethod, forkSocketNode, identity } from "./grpc-raw.js";
import { rawCommitter } from "./raw-commit.js";

export const RAW_TURN_SERVICE: ServiceDefinition = {
  turn: bytesMethod("/bench.RawTurn/Turn", false, true),
  connect: bytesMethod("/bench.RawTurn/Connect", true, true),
};
const CHILD = new URL("./raw-turn-node.ts", import.meta.url);

export interface RawTurnShape {
  /** One turn's worth of messages; resolves when the client saw the stream end. */
  turn(payload: Buffer): Promise<void>;
  close(): Promise<void>;
}

/** `address` is where the in-process server listens; `nodeSocket` a unix socket path for the child. */
export async function startRawTurnShape(
  address: string,
  nodeSocket: string,
  opts: { commitDb?: string } = {},
): Promise<RawTurnShape> {
  const node = await forkSocketNode(CHILD, nodeSocket);
  const committer = opts.commitDb !== undefined ? rawCommitter(opts.commitDb) : undefined;
  const nodeClient = new Client(node.target, credentials.createInsecure());
  const server = new Server();
  server.addService(RAW_TURN_SERVICE, {
    turn: (call: ServerWritableStream<Buffer, Buffer>) => {
      const payload = call.request;
      call.write(payload); // the Session frame
      const up = nodeClient.makeBidiStreamRequest<Buffer, Buffer>("/bench.RawTurn/Connect", identity, identity);
      let received = 0;
      up.on("data", (msg: Buffer) => {
        received++;
        if (received === 1) {
          committer?.commit(3);
          call.write(msg); // EXECUTION_START
          call.write(msg); // INPUT
          call.write(msg); // MODEL_CALL
          call.write(msg); // the model's delta
          up.write(msg); // model result
        } else {
          committer?.commit(2);
          call.write(msg); // OUTPUT
          call.write(msg); // END
        }
      });
      up.on("error", (err) => call.destroy(err));
      up.on("end", () => call.end());
      up.write(payload); // Start
    },
  });
  const target = (await bindInsecure(server, address)).target;
  const client = new Client(target, credentials.createInsecure());
  return {
    turn: (payload) =>
      new Promise<void>((resolve, reject) => {
        const stream = client.makeServerStreamRequest<Buffer, Buffer>(
          "/bench.RawTurn/Turn",
          identity,
          identity,
          payload,
        );
        let n = 0;
        stream.on("data", () => n++);
        stream.on("error", reject);
        stream.on("end", () =>
          n === 7 ? resolve() : reject(new Error(`raw turn streamed ${n} messages, expected 7`)),
        );
      }),
    close: async () => {
      client.close();
      nodeClient.close();
      node.child.kill();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      committer?.close();
    },
  };
}
