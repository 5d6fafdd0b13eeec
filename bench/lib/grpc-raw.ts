// Plumbing shared by the raw baselines and floors: bind a grpc-js server without credentials, and fork
// a TypeScript child process that serves on a unix socket and reports its address over IPC. Invariant:
// the resolved target is the one the server is really listening on (port 0 resolved).
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type MethodDefinition, ServerCredentials, type Server } from "@grpc/grpc-js";
import { parseAddress, withPort } from "../../src/wire/index.js";

/** Raw bytes in, the same bytes out: the (de)serializer of every raw method. */
export const identity = (b: Buffer): Buffer => b;

/** A gRPC method whose messages are raw bytes (no protobuf): what the raw baselines and floors serve. */
export function bytesMethod(
  path: string,
  requestStream: boolean,
  responseStream: boolean,
): MethodDefinition<Buffer, Buffer> {
  return {
    path,
    requestStream,
    responseStream,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  };
}

/** Binds `server` at `address` (unix://PATH or HOST:PORT, port 0 allowed); resolves to its parsed, bound address. */
export async function bindInsecure(server: Server, address: string): Promise<ReturnType<typeof withPort>> {
  const parsed = parseAddress(address);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(parsed.target, ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return withPort(parsed, port);
}

/** Forks `script` (a .ts module next to the caller, run through tsx) with `socket`; resolves once it announces its target. */
export async function forkSocketNode(script: URL, socket: string): Promise<{ child: ChildProcess; target: string }> {
  const child = fork(fileURLToPath(script), [socket], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const target = await new Promise<string>((resolve, reject) => {
    child.once("message", (m) => resolve(String(m)));
    child.once("exit", (code) => reject(new Error(`${script.pathname} exited (${code})`)));
  });
  return { child, target };
}
