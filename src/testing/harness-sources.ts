// How the testing kit takes a harness: a module path, a factory, or a harness object. Invariant: each
// source becomes exactly one static registry entry of the test host — a module path through the same
// runtime table as `serve --harness NAME=local|spawned:PATH` (so a module behaves as it will when
// served), a factory or object on the local runtime; a name that is not a DNS label is refused first.
import { HarnessSpecFlag } from "../host/config.js";
import type { Host } from "../host/host.js";
import { LocalRuntime } from "../runtime/local.js";
import type { Harness, HarnessFactory } from "../harness/types.js";

/**
 * A harness for a test host: a module path (default export a factory; `.js`, `.mjs` or `.ts`), the
 * same with the runtime to place it on (`spawned` for a REQUIRES_MEMORY_SNAPSHOT harness), a factory
 * (one instance per session), or a harness object (one instance shared by every session).
 */
export type HarnessSource =
  | string
  | { readonly module: string; readonly runtime: "local" | "spawned" }
  | HarnessFactory
  | Harness;

/** The module-path sources, as host config entries. */
export function moduleSpecs(harnesses: Readonly<Record<string, HarnessSource>>): HarnessSpecFlag[] {
  const specs: HarnessSpecFlag[] = [];
  for (const [name, source] of Object.entries(harnesses)) {
    checkName(name);
    if (typeof source === "string") specs.push(HarnessSpecFlag.parse({ name, runtime: "local", target: source }));
    else if (typeof source === "object" && "module" in source)
      specs.push(HarnessSpecFlag.parse({ name, runtime: source.runtime, target: source.module }));
  }
  return specs;
}

/** Adds the factory and object sources to an open host's registry. */
export function addInProcessHarnesses(host: Host, harnesses: Readonly<Record<string, HarnessSource>>): void {
  for (const [name, source] of Object.entries(harnesses)) {
    if (typeof source === "string" || (typeof source === "object" && "module" in source)) continue;
    const factory: HarnessFactory = typeof source === "function" ? source : () => source;
    host.registry.addStatic({
      name,
      runtime: new LocalRuntime(factory, host.limits.localActors),
      descriptorId: "",
      checkpointPolicy: "every-turn",
    });
  }
}

function checkName(name: string): void {
  const r = HarnessSpecFlag.shape.name.safeParse(name);
  if (!r.success) throw new TypeError(`harness name ${JSON.stringify(name)}: ${r.error.issues[0]?.message ?? ""}`);
}
