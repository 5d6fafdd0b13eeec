// Console.ListHarnessOrigins: where each harness this host was started with comes from — built in, a
// module (its absolute path) run in the host's process or in a node process it spawns, a node at an
// address, or a VM image. Invariants: read only from the host's own configuration (nothing is probed,
// nothing written); every static entry is listed once, in name then version order.
import { create } from "@bufbuild/protobuf";
import { type HarnessOrigin, HarnessOriginSchema } from "../gen/harnesshost/v1/console_pb.js";
import type { Host } from "../host/host.js";
import { resolve } from "node:path";
import { isBuiltinHarness } from "../runtime/harness-module.js";
import type { HarnessEntry } from "../placement/harness-entry.js";

function originOf(entry: HarnessEntry): HarnessOrigin | undefined {
  const o = entry.origin;
  if (entry.source !== "static" || o === undefined) return undefined;
  const base = { name: entry.name, version: entry.version ?? "", runtime: o.runtime };
  switch (o.runtime) {
    case "local":
    case "spawned":
      return isBuiltinHarness(o.target)
        ? create(HarnessOriginSchema, { ...base, builtin: true })
        : create(HarnessOriginSchema, { ...base, module: resolve(o.target) });
    case "remote":
    case "vm":
      return create(HarnessOriginSchema, { ...base, address: o.target });
    default: {
      const exhaustive: never = o.runtime;
      throw new Error(`unknown runtime ${String(exhaustive)}`);
    }
  }
}

export function harnessOrigins(host: Host): HarnessOrigin[] {
  return host.registry
    .all()
    .map(originOf)
    .filter((o): o is HarnessOrigin => o !== undefined)
    .sort((a, b) => (a.name === b.name ? a.version.localeCompare(b.version) : a.name < b.name ? -1 : 1));
}
