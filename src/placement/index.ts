// Placement: admission (CanPlace), the session guard, and the Placer that runs session operations.
export { Placer } from "./placer.js";
export type { ExecRequest, ForkRequest, PlacerDeps, ResumeResult, SuspendResult } from "./placer.js";
export { admit, requiresMemory, DESCRIBE_TIMEOUT_MS } from "./admission.js";
export type { Admission } from "./admission.js";
export { SessionGuard } from "./session-guard.js";
export type { SessionOperation } from "./session-guard.js";
export { HistoryCache } from "./history-cache.js";
export type { CheckpointPolicy, HarnessEntry, HarnessResolver } from "./harness-entry.js";
export { HarnessRegistry } from "./registry.js";
