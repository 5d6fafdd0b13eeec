// Server reflection on the Sessions port, loaded on its first call. Invariants: reflection describes
// the Sessions service and gRPC health only — the operator HarnessRegistry is never discoverable on the
// Sessions port; the two reflection services (v1, v1alpha) are registered before the port is bound,
// with the same method paths and streaming shape as @grpc/reflection's, but that package and the
// parse of the .proto files it describes (~0.5 s of start-up, issue 41) happen only when the first
// reflection call arrives — synchronously, on its first message or at its start, whichever is first —
// and then serve every call exactly as @grpc/reflection does.
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Server, ServiceDefinition, handleBidiStreamingCall, ServerDuplexStream } from "@grpc/grpc-js";
import type { PackageDefinition } from "@grpc/proto-loader";
import { PACKAGE_ROOT } from "../paths.js";

const PROTO_ROOT = join(PACKAGE_ROOT, "proto");
const require = createRequire(import.meta.url);
let cached: PackageDefinition | undefined;

export function reflectedPackage(): PackageDefinition {
  const { loadSync } = require("@grpc/proto-loader") as typeof import("@grpc/proto-loader");
  // grpc-health-check parses its health.proto when imported: it loads here, with the rest of reflection.
  const { protoPath: healthProtoPath } = require("grpc-health-check") as typeof import("grpc-health-check");
  cached ??= loadSync(["agentsessions/v1/session.proto", healthProtoPath], {
    includeDirs: [PROTO_ROOT],
    keepCase: true,
  });
  return cached;
}

/** The reflection services' one method, by service path (both are bidirectional streams). */
const PATHS = ["grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"].map(
  (service) => `/${service}/ServerReflectionInfo`,
);

type Method = ServiceDefinition[string];
interface Loaded {
  readonly method: Method;
  readonly handler: handleBidiStreamingCall<unknown, unknown>;
}

let loaded: Map<string, Loaded> | undefined;

/** @grpc/reflection's own methods and handlers, by path (loaded and built on the first use). */
function real(path: string): Loaded {
  if (!loaded) {
    const { ReflectionService } = require("@grpc/reflection") as typeof import("@grpc/reflection");
    const found = new Map<string, Loaded>();
    const collector = {
      addService(def: ServiceDefinition, impl: Record<string, handleBidiStreamingCall<unknown, unknown>>) {
        for (const [name, method] of Object.entries(def)) {
          const handler = impl[name];
          if (handler) found.set(method.path, { method, handler });
        }
      },
    };
    new ReflectionService(reflectedPackage()).addToServer(collector as unknown as Server);
    loaded = found;
  }
  const hit = loaded.get(path);
  if (!hit) throw new Error(`@grpc/reflection has no method ${path}`);
  return hit;
}

/** Registers the reflection services on `server`; their implementation loads on the first call. */
export function addLazyReflection(server: Server): void {
  for (const path of PATHS) {
    const method: Method = {
      path,
      requestStream: true,
      responseStream: true,
      originalName: "serverReflectionInfo",
      requestSerialize: (value: unknown) => real(path).method.requestSerialize(value),
      requestDeserialize: (bytes: Buffer) => real(path).method.requestDeserialize(bytes),
      responseSerialize: (value: unknown) => real(path).method.responseSerialize(value),
      responseDeserialize: (bytes: Buffer) => real(path).method.responseDeserialize(bytes),
    };
    server.addService({ ServerReflectionInfo: method } as ServiceDefinition, {
      ServerReflectionInfo: (call: ServerDuplexStream<unknown, unknown>) => real(path).handler(call),
    });
  }
}
