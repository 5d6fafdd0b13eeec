// Writing to a Node stream without buffering past it. Invariant: a write resolves once the stream took the
// message (at once, or after 'drain'), and rejects CANCELLED if the stream closes first — never hangs.
// Its own module so a client (which writes request streams) loads no server code.
import type { Writable } from "node:stream";
import { ErrorCode, HostError } from "../errors/index.js";

/** Writes one message; waits for 'drain' when the stream's buffer is full. */
export function writeWithBackpressure(stream: Writable, value: unknown): Promise<void> {
  if (stream.destroyed) return Promise.reject(new HostError(ErrorCode.Cancelled, "stream closed"));
  if (stream.write(value)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onDrain = (): void => {
      stream.off("close", onClose);
      resolve();
    };
    const onClose = (): void => {
      stream.off("drain", onDrain);
      reject(new HostError(ErrorCode.Cancelled, "stream closed"));
    };
    stream.once("drain", onDrain);
    stream.once("close", onClose);
  });
}
