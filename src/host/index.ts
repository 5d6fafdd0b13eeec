// Host assembly: config → journal, snapshot store, registry, placer.
export { Host, BUILTIN_STATICS } from "./host.js";
export type { HostOverrides, NewSession } from "./host.js";
export { HostConfig, HarnessSpecFlag, parseHarnessFlag } from "./config.js";
export type { HostConfigInput } from "./config.js";
export { HarnessCatalog, REGISTRATION_POLL_MS } from "./harness-catalog.js";
export type { HarnessPage, HarnessVersionInfo } from "./harness-catalog.js";
export { buildRuntime, loadHarnessFactory } from "./runtimes.js";
export type { RuntimeBuilder, RuntimeContext } from "./runtimes.js";
export { sessionProto, sessionView } from "./session-proto.js";
export { collectSnapshotGarbage, scheduleSnapshotGarbage } from "./snapshot-gc.js";
