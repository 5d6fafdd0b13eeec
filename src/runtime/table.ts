// The one runtime table: every runtime kind a harness spec can name and the constructor that builds it.
// Invariant: the runtime kind named in the spec is the one built — a memory harness configured on
// `local` gets the local runtime and is then refused by CanPlace at every admission, never silently
// upgraded; a kind not in the table is refused FAILED_PRECONDITION.
import { ErrorCode, HostError } from "../errors/index.js";
import type { NodeLimits } from "../node/limits.js";
import { DEFAULT_LIMITS } from "../limits/index.js";
import { clipForLog, type Log } from "../obs/op-log.js";
import type { HostMetrics } from "../obs/metrics.js";
import type { SnapshotStore } from "../snapshot/store.js";
import { moduleDigest } from "./build-digest.js";
import { loadHarnessFactory } from "./harness-module.js";
import { LocalRuntime } from "./local.js";
import type { Runtime } from "./types.js";

export type RuntimeKind = "local" | "spawned" | "remote" | "vm";

/** What a runtime is built from: its kind and target (a built-in name, module path, address or image). */
export interface RuntimeSpec {
  readonly runtime: RuntimeKind;
  readonly target: string;
  /** The harness's registry name (log lines and metric labels); default: the target. */
  readonly name?: string;
}

export interface RuntimeContext {
  readonly snapshots: SnapshotStore;
  readonly nodeIdleMs: number;
  /** Deadlines and turn bounds of harness nodes (spawned and remote runtimes). */
  readonly nodeLimits?: NodeLimits;
  /** Instances the local runtime keeps (limit localActors). */
  readonly localActors?: number;
  /** The host's logger (runtimes add their harness name). */
  readonly log?: Log;
  /** The host's metrics (the spawned runtime counts its node processes). */
  readonly metrics?: HostMetrics;
}

/** A runtime's own logger (lines not about one operation): the harness name and runtime kind bound. */
function runtimeLog(spec: RuntimeSpec, ctx: RuntimeContext, runtime: RuntimeKind): Log | undefined {
  return ctx.log?.child({ harness: clipForLog(spec.name ?? spec.target, DEFAULT_LIMITS.logFieldChars), runtime });
}

export type RuntimeBuilder = (spec: RuntimeSpec, ctx: RuntimeContext) => Promise<Runtime>;

const RUNTIMES: Readonly<Record<RuntimeKind, RuntimeBuilder>> = {
  local: async (spec, ctx) =>
    new LocalRuntime(await loadHarnessFactory(spec.target), ctx.localActors, moduleDigest(spec.target)),
  // The spawned, remote and vm runtimes load on the first harness of their kind: a host without one
  // never pays for them (docs/performance.md "serve_ready_ms").
  spawned: async (spec, ctx) =>
    new (await import("./spawned.js")).SpawnedRuntime({
      target: spec.target,
      factory: await loadHarnessFactory(spec.target),
      digest: moduleDigest(spec.target),
      snapshots: ctx.snapshots,
      idleMs: ctx.nodeIdleMs,
      ...(ctx.nodeLimits !== undefined ? { limits: ctx.nodeLimits } : {}),
      ...(ctx.log !== undefined ? { log: runtimeLog(spec, ctx, "spawned") } : {}),
      ...(ctx.metrics !== undefined ? { metrics: ctx.metrics, harnessName: spec.name ?? spec.target } : {}),
    }),
  remote: async (spec, ctx) =>
    new (await import("./remote.js")).RemoteRuntime(
      spec.target,
      ctx.snapshots,
      ctx.nodeLimits,
      runtimeLog(spec, ctx, "remote"),
    ),
  vm: async (spec, ctx) =>
    new (await import("./vm.js")).VmRuntime({
      image: spec.target,
      snapshots: ctx.snapshots,
      ...(ctx.nodeLimits !== undefined ? { limits: ctx.nodeLimits } : {}),
      ...(ctx.log !== undefined ? { log: runtimeLog(spec, ctx, "vm") } : {}),
    }),
};

/** Every runtime kind this build can place a harness on. */
export const RUNTIME_KINDS = Object.keys(RUNTIMES) as RuntimeKind[];

/** Builds the runtime a spec names (the spec may carry more fields, e.g. a registry name; they are ignored). */
export async function buildRuntime<S extends RuntimeSpec>(spec: S, ctx: RuntimeContext): Promise<Runtime> {
  const builder = Object.hasOwn(RUNTIMES, spec.runtime) ? RUNTIMES[spec.runtime] : undefined;
  if (!builder)
    throw new HostError(ErrorCode.FailedPrecondition, `runtime "${spec.runtime}" is not available in this build`);
  return builder(spec, ctx);
}
