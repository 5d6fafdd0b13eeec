// `harnesshost`: the host embedding API — open a Host in your own process (with your own model, tool
// executor, journal or effect handlers), serve it over gRPC, and handle its typed errors. Invariant:
// this module only re-exports; harness authoring lives in `harnesshost/sdk`, the remote client in
// `harnesshost/client` and the conformance suite in `harnesshost/conformance`.
export { Host, BUILTIN_STATICS } from "./host/host.js";
export type { HostOverrides, NewSession } from "./host/host.js";
export { HostConfig, HarnessSpecFlag, parseHarnessFlag } from "./host/config.js";
export type { HostConfigInput } from "./host/config.js";
export { collectSnapshotGarbage, scheduleSnapshotGarbage } from "./host/snapshot-gc.js";
export { startServer, DEFAULT_GRACE_MS } from "./server/server.js";
export type { RunningServer, ServerOptions, TlsFiles } from "./server/server.js";
export { ErrorCode, HostError, isHostError } from "./errors/index.js";
export type { ToolCallContext, ToolExecutor } from "./controller/tools.js";
export { hostTool } from "./controller/host-tools.js";
export type { HostTool, HostToolContext, HostToolOutput, HostTools } from "./controller/host-tools.js";
export type { ModelProvider, InvokeOptions } from "./model/types.js";
export { echoModel, openAICompatible } from "./model/index.js";
export type { OpenAICompatibleOptions } from "./model/index.js";
export { openJournal } from "./journal/open.js";
export { MemoryJournal } from "./journal/memory/journal.js";
export type { Journal, SessionInfo, JournalRecord } from "./journal/types.js";
export { FsSnapshotStore } from "./snapshot/store.js";
export type { SnapshotStore } from "./snapshot/store.js";
export { defineEffect, EffectDispatcher, EffectRegistry, registerBuiltinEffects } from "./effects/index.js";
export type { Effect, EffectDefinition, EffectHandler, EffectLogger, EffectSnapshot } from "./effects/index.js";
export { replayCheck, replayCheckSession, recordsFromJsonl } from "./versions/replay-check.js";
export type { RecordedSession, ReplayCheckResult } from "./versions/replay-check.js";
export { DivergedError } from "./controller/serving-sink.js";
