// Registers the spawned, remote and vm runtime builders with the host assembly. Invariant: a harness
// spec's runtime kind maps to exactly this constructor.
import { loadHarnessFactory, registerRuntimeBuilder } from "../host/runtimes.js";
import { RemoteRuntime } from "./remote.js";
import { SpawnedRuntime } from "./spawned.js";
import { VmRuntime } from "./vm.js";

registerRuntimeBuilder(
  "spawned",
  async (spec, ctx) =>
    new SpawnedRuntime({
      target: spec.target,
      factory: await loadHarnessFactory(spec.target),
      snapshots: ctx.snapshots,
      idleMs: ctx.nodeIdleMs,
      ...(ctx.nodeLimits !== undefined ? { limits: ctx.nodeLimits } : {}),
    }),
);
registerRuntimeBuilder("remote", async (spec, ctx) => new RemoteRuntime(spec.target, ctx.snapshots, ctx.nodeLimits));
registerRuntimeBuilder("vm", async (spec, ctx) => new VmRuntime({ image: spec.target, snapshots: ctx.snapshots }));
