// The package definition server reflection describes. Invariant: it holds the Sessions service and
// gRPC health only — the operator HarnessRegistry is never discoverable on the Sessions port.
import { fileURLToPath } from "node:url";
import { loadSync, type PackageDefinition } from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";

const PROTO_ROOT = fileURLToPath(new URL("../../proto", import.meta.url));
let cached: PackageDefinition | undefined;

export function reflectedPackage(): PackageDefinition {
  cached ??= loadSync(["agentsessions/v1/session.proto", healthProtoPath], {
    includeDirs: [PROTO_ROOT],
    keepCase: true,
  });
  return cached;
}
