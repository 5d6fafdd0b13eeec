// The raw grpc-js unary baseline for the gRPC figures: one method whose request and response are the
// bytes as sent (no protobuf, no interceptors, no auth). Invariant: it is served and dialled exactly
// like harnesshost's own listeners (same address forms, insecure credentials), so only the work above
// the transport differs between a figure's subject and this baseline.
import {
  Client,
  Server,
  credentials,
  type ServiceDefinition,
  type sendUnaryData,
  type ServerUnaryCall,
} from "@grpc/grpc-js";
import { bindInsecure } from "./grpc-raw.js";

const identity = (b: Buffer): Buffer => b;

const PING: ServiceDefinition = {
  ping: {
    path: "/bench.Raw/Ping",
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

export interface RawPing {
  readonly address: string;
  /** One unary round trip carrying `payload` both ways. */
  ping(payload: Buffer): Promise<Buffer>;
  close(): Promise<void>;
}

/** Serves the echo method on `address` (`unix:///path` or `127.0.0.1:0`) and dials it. */
export async function startRawPing(address: string): Promise<RawPing> {
  const server = new Server();
  server.addService(PING, {
    ping: (call: ServerUnaryCall<Buffer, Buffer>, done: sendUnaryData<Buffer>) => done(null, call.request),
  });
  const bound = await bindInsecure(server, address);
  const client = new Client(bound.target, credentials.createInsecure());
  return {
    address: bound.kind === "tcp" ? bound.target : address,
    ping: (payload) =>
      new Promise<Buffer>((resolve, reject) => {
        client.makeUnaryRequest<Buffer, Buffer>("/bench.Raw/Ping", identity, identity, payload, (err, res) =>
          err || res === undefined ? reject(err ?? new Error("empty ping response")) : resolve(res),
        );
      }),
    close: async () => {
      client.close();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
  };
}
