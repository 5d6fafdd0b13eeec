// The one grpc-js ⇄ protobuf-es adapter: service definitions, typed servers and clients, addresses and
// status mapping. Invariant: every gRPC call harnesshost makes or serves goes through this module.
export { parseAddress, withPort } from "./address.js";
export type { Address } from "./address.js";
export { EncodedResponse, serviceDefinition, methodDefinition, methodPath } from "./service.js";
export type {
  DecodeBound,
  MethodShape,
  MethodsOf,
  RequestOf,
  RequestInit,
  ResponseOf,
  ResponseInit,
} from "./service.js";
export { addService, listen, readStream } from "./server.js";
export { writeWithBackpressure } from "./backpressure.js";
export type { CallContext, ServerHandler, ServiceImpl } from "./server.js";
export { createClient, dial } from "./client.js";
export { BULK_FLOW_WINDOW_BYTES, bulkChannelOptions, widenServerWindows } from "./flow-window.js";
export type { BidiCall, CallOptions, ClientMethod, DialOptions, ServiceClient } from "./client.js";
export { RpcError, abortError, rpcErrorOfStatus, statusOfError } from "./status.js";
export { AsyncQueue } from "./queue.js";
