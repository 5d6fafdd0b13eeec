// The package definition server reflection describes. Invariant: it holds the Sessions service and
// gRPC health only — the operator HarnessRegistry is never discoverable on the Sessions port.
import { join } from "node:path";
import { loadSync, type PackageDefinition } from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { PACKAGE_ROOT } from "../paths.js";

const PROTO_ROOT = join(PACKAGE_ROOT, "proto");
let cached: PackageDefinition | undefined;

export function reflectedPackage(): PackageDefinition {
  cached ??= loadSync(["agentsessions/v1/session.proto", healthProtoPath], {
    includeDirs: [PROTO_ROOT],
    keepCase: true,
  });
  return cached;
}
