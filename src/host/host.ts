// A Host assembles one journal, one snapshot store, the harness registry and the Placer from a
// validated config; the gRPC server and the in-process CLI both run on it. Invariant: everything a
// host writes goes through the journal it opened here, and closing it releases every runtime.
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { IdentityRefSchema, OriginSchema } from "../gen/agentsessions/v1/common_pb.js";
import type { IdentityRef, Origin } from "../gen/agentsessions/v1/common_pb.js";
import { newSessionUid } from "../controller/ids.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { openJournal } from "../journal/index.js";
import type { Journal, SessionInfo } from "../journal/types.js";
import { type ModelFlagOptions, modelFromFlag } from "../model/index.js";
import type { ModelProvider } from "../model/types.js";
import { HarnessRegistry } from "../placement/registry.js";
import { Placer } from "../placement/placer.js";
import { bindingAnnotations } from "../placement/registration-binding.js";
import type { ToolExecutor } from "../controller/tools.js";
import { DEMO_WRITE_TOOL, DemoWriteExecutor } from "../../harnesses/ask/demo-write.js";
import { NOTES_READ_TOOL, NOTES_WRITE_TOOL, NotesExecutor } from "../../harnesses/notes/tools.js";
import { ToolRouter } from "../controller/tool-router.js";
import { toolPolicy } from "../controller/tool-policy.js";
import { checkHostTools, HostToolExecutor, type HostTools, withHostTools } from "../controller/host-tools.js";
import { EffectDispatcher } from "../effects/dispatcher.js";
import { type Log, silentLog } from "../obs/log.js";
import { HostMetrics } from "../obs/metrics.js";
import { logModelPayloads } from "./payload-log.js";
import { instrumentJournal, instrumentModel, instrumentSnapshots, instrumentTools } from "./instrument.js";
import { MetricsCounters, registerBuiltinEffects } from "../effects/builtins.js";
import { FsSnapshotStore, type GarbageOptions, type SnapshotStore } from "../snapshot/store.js";
import { type Limits, resolveLimits } from "../limits/index.js";
import { HostConfig, type HarnessSpecFlag, type HostConfigInput } from "./config.js";
import { buildRuntime } from "./runtimes.js";
import { SessionReads } from "./session-reads.js";
import { collectSnapshotGarbage, type GarbageReport, type GcSchedule, scheduleSnapshotGarbage } from "./snapshot-gc.js";

export interface NewSession {
  readonly harness?: string;
  readonly project?: string;
  readonly name?: string;
  readonly model?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly origin?: Origin;
  readonly identity?: IdentityRef;
}

export interface HostOverrides {
  readonly model?: ModelProvider;
  readonly tools?: ToolExecutor;
  /**
   * Your own host-mediated tools (`serve --tools MODULE`), served besides the built-ins (or `tools`);
   * receipts of completed runs in <data>/tool-receipts.jsonl. A name the host already executes is refused.
   */
  readonly hostTools?: HostTools;
  readonly journal?: Journal;
  readonly snapshots?: SnapshotStore;
  /** Effect handlers; default: a dispatcher with the built-ins (audit when configured, webhook, metrics). */
  readonly effects?: EffectDispatcher;
  /**
   * Where the host logs: placement, checkpoints, runtimes, effect handler failures (ids and reasons,
   * never payloads). Default: nowhere.
   */
  readonly logger?: Log;
  /**
   * Where the host's Prometheus metrics are kept; default: a fresh HostMetrics per host. `false`: no
   * metrics at all (no decorators, nothing counted) — the bench's baseline of their cost.
   */
  readonly metrics?: HostMetrics | false;
  /**
   * Log every live model call's request and response bodies (`serve --log-payloads`). Default false:
   * bodies hold users' conversations and tool arguments, which do not belong in an operator's log
   * pipeline unless someone debugging a harness asks for them.
   */
  readonly logPayloads?: boolean;
}

/** The static harnesses every host serves unless the config names them otherwise. */
export const BUILTIN_STATICS: readonly HarnessSpecFlag[] = [
  { name: "echo", runtime: "local", target: "echo", checkpointPolicy: "every-turn", descriptorId: "" },
  { name: "counter", runtime: "spawned", target: "counter", checkpointPolicy: "every-turn", descriptorId: "" },
  { name: "ask", runtime: "local", target: "ask", checkpointPolicy: "every-turn", descriptorId: "" },
  { name: "askcounter", runtime: "spawned", target: "askcounter", checkpointPolicy: "every-turn", descriptorId: "" },
  { name: "question", runtime: "local", target: "question", checkpointPolicy: "every-turn", descriptorId: "" },
];

/** The `chat` harness, served besides the built-ins when a model other than echo is configured (as the reference). */
export const CHAT_STATIC: HarnessSpecFlag = {
  name: "chat",
  runtime: "local",
  target: "chat",
  checkpointPolicy: "every-turn",
  descriptorId: "",
};

/** The statics a host serves unless its config names them otherwise: the built-ins, and chat with a model. */
export function defaultStatics(config: Pick<HostConfig, "model">): readonly HarnessSpecFlag[] {
  return config.model === "echo" ? BUILTIN_STATICS : [...BUILTIN_STATICS, CHAT_STATIC];
}

/** The model flags of a config, as modelFromFlag takes them. */
export function modelFlagOptions(config: HostConfig): ModelFlagOptions {
  return {
    ...(config.modelName !== undefined ? { modelName: config.modelName } : {}),
    ...(config.modelUrl !== undefined ? { url: config.modelUrl } : {}),
    ...(config.modelPath !== undefined ? { path: config.modelPath } : {}),
    ...(config.modelAuthHeader !== undefined ? { authHeader: config.modelAuthHeader } : {}),
  };
}

/** The tools the host executes itself (`demo.write`, the notes example's); a tools module cannot replace them. */
export const BUILTIN_TOOL_NAMES: readonly string[] = [DEMO_WRITE_TOOL, NOTES_READ_TOOL, NOTES_WRITE_TOOL];

/** The executors a host has without overrides: `demo.write` and the notes example's tools. */
export function builtinTools(dataDir: string): ToolExecutor {
  const notes = new NotesExecutor(dataDir);
  return new ToolRouter({
    [DEMO_WRITE_TOOL]: new DemoWriteExecutor(join(dataDir, "demo-writes.jsonl")),
    [NOTES_READ_TOOL]: notes,
    [NOTES_WRITE_TOOL]: notes,
  });
}

/** Blobs live beside the journal: in its database when its storage offers that, else under the data directory. */
async function defaultSnapshotStore(journal: Journal, dataDir: string): Promise<SnapshotStore> {
  if (journal.storage.snapshotsInJournal) return (await import("../snapshot/pg-store.js")).snapshotStoreOf(journal);
  return new FsSnapshotStore(join(dataDir, "snapshots"));
}

export class Host {
  /** Every limit in force (defaults overlaid with config.limits). */
  readonly limits: Limits;
  /** What the edges read of this host's sessions (src/host/session-reads.ts): never the journal itself. */
  readonly reads: SessionReads;

  private constructor(
    readonly config: HostConfig,
    readonly journal: Journal,
    readonly snapshots: SnapshotStore,
    readonly registry: HarnessRegistry,
    readonly placer: Placer,
    readonly model: ModelProvider,
    /** Typed post-commit effect handlers and their dispatch/failure counters. */
    readonly effects: EffectDispatcher,
    /** What the built-in `metrics.count` effect counts. */
    readonly metrics: MetricsCounters,
    /** The executor of approved and mediated tool calls (default: the `demo.write` executor). */
    readonly tools: ToolExecutor,
    /** The host's logger (silent unless one was given). */
    readonly log: Log,
    /** The host's Prometheus metrics (docs/operations.md, "Metrics"); undefined when turned off. */
    readonly hostMetrics: HostMetrics | undefined,
  ) {
    this.limits = resolveLimits(config.limits);
    this.reads = new SessionReads(journal);
  }

  static async open(input: HostConfigInput, overrides: HostOverrides = {}): Promise<Host> {
    const config = HostConfig.parse(input);
    // Checked before anything opens: a bad definition changes nothing.
    const ownTools = overrides.hostTools
      ? checkHostTools(overrides.hostTools, "host tools", BUILTIN_TOOL_NAMES)
      : undefined;
    const log = overrides.logger ?? silentLog;
    const hostMetrics = overrides.metrics === false ? undefined : (overrides.metrics ?? new HostMetrics());
    const rawJournal =
      overrides.journal ??
      (await openJournal(config.journal ?? join(config.dataDir, "journal.db"), { readOnly: config.readOnly }));
    const rawSnapshots = overrides.snapshots ?? (await defaultSnapshotStore(rawJournal, config.dataDir));
    const snapshots = hostMetrics ? instrumentSnapshots(rawSnapshots, hostMetrics) : rawSnapshots;
    const journal = hostMetrics ? instrumentJournal(rawJournal, hostMetrics) : rawJournal;
    const counts = rawJournal.countByComputeState?.bind(rawJournal);
    if (counts) hostMetrics?.countSessionsWith(counts);
    const lockCounts = rawJournal.sessionLockCounts?.bind(rawJournal);
    if (lockCounts) hostMetrics?.countSessionLocksWith(lockCounts);
    const rawModel = overrides.model ?? modelFromFlag(config.model, modelFlagOptions(config));
    const metered = hostMetrics ? instrumentModel(rawModel, hostMetrics) : rawModel;
    const model = overrides.logPayloads === true ? logModelPayloads(metered, log) : metered;
    const registry = new HarnessRegistry(config.defaultHarness);
    const configured = new Set(config.harnesses.map((h) => h.name));
    const statics = [...defaultStatics(config).filter((b) => !configured.has(b.name)), ...config.harnesses];
    const limits = resolveLimits(config.limits);
    try {
      for (const spec of statics) {
        const runtime = await buildRuntime(spec, {
          snapshots,
          nodeIdleMs: config.nodeIdleMs,
          nodeLimits: limits,
          localActors: limits.localActors,
          log,
          ...(hostMetrics ? { metrics: hostMetrics } : {}),
        });
        registry.addStatic({
          name: spec.name,
          ...(spec.version !== undefined ? { version: spec.version } : {}),
          runtime,
          descriptorId: spec.descriptorId,
          checkpointPolicy: spec.checkpointPolicy,
          origin: { runtime: spec.runtime, target: spec.target },
        });
      }
    } catch (err) {
      await registry.close();
      await journal.close();
      throw err;
    }
    const base = overrides.tools ?? builtinTools(config.dataDir);
    const own = ownTools ? new HostToolExecutor(ownTools, join(config.dataDir, "tool-receipts.jsonl")) : undefined;
    const tools = instrumentTools(own ? withHostTools(base, own) : base);
    const effects = overrides.effects ?? new EffectDispatcher(log);
    const metrics = overrides.effects
      ? new MetricsCounters()
      : registerBuiltinEffects(effects, config.auditFile !== undefined ? { auditFile: config.auditFile } : {});
    const placer = new Placer({
      limits: resolveLimits(config.limits),
      journal,
      model,
      harnesses: registry,
      tools,
      effects,
      auditTurns: config.auditFile !== undefined,
      turnMs: limits.turnMs,
      toolPolicy: toolPolicy(config.toolsWithoutApproval),
      log,
      ...(hostMetrics ? { metrics: hostMetrics } : {}),
      verifiedPositions: { trust: !config.distrustVerifiedPositions },
    });
    return new Host(config, journal, snapshots, registry, placer, model, effects, metrics, tools, log, hostMetrics);
  }

  /** Creates a session's metadata row (no events, no compute). */
  async createSession(init: NewSession = {}): Promise<SessionInfo> {
    await this.registry.refresh(init.harness ?? "");
    const entry = this.registry.resolveForNewSession(init.harness ?? "");
    return this.journal.createSession({
      uid: newSessionUid(),
      project: init.project || this.config.defaultProject,
      name: init.name ?? "",
      harness: entry.name,
      model: init.model ?? "",
      labels: init.labels ?? {},
      annotations: bindingAnnotations(entry, init.annotations ?? {}),
      ...(init.origin ? { origin: create(OriginSchema, init.origin) } : {}),
      ...(init.identity ? { identity: create(IdentityRefSchema, init.identity) } : {}),
    });
  }

  async getSession(uid: string): Promise<SessionInfo> {
    const info = await this.journal.getSession(uid);
    if (!info) throw new HostError(ErrorCode.NotFound, `session ${uid} not found`);
    return info;
  }

  /** Removes a session that has no record yet (an Exec that created it was refused); false if it has one. */
  discardEmptySession(uid: string): Promise<boolean> {
    return this.journal.removeEmptySession(uid);
  }

  /** One snapshot garbage collection (docs/protocol.md §9.7). */
  collectSnapshotGarbage(opts: GarbageOptions = {}): Promise<GarbageReport> {
    return collectSnapshotGarbage(this.journal, this.snapshots, opts);
  }

  /** Snapshot garbage collection every `intervalMs` (docs/protocol.md §9.7). */
  scheduleSnapshotGarbage(opts: Parameters<typeof scheduleSnapshotGarbage>[2]): GcSchedule {
    return scheduleSnapshotGarbage(this.journal, this.snapshots, opts);
  }

  async close(): Promise<void> {
    await this.placer.effectsIdle();
    await this.placer.positionsIdle();
    await this.registry.close();
    await this.journal.close();
  }
}
