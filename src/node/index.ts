// Harness nodes and the host's view of them: serveHarness (node side: Harness + Actors services, one
// actor per session) and RemoteHarness/ActorsClient (host side). Invariant: the two sides speak only
// the agentsessions.v1.Harness and harnesshost.v1.Actors protocols, through src/wire.
export { serveHarness } from "./serve.js";
export type { HarnessNode, ServeHarnessOptions } from "./serve.js";
export { RemoteHarness, RemoteTurnError, dialHarness } from "./remote-harness.js";
export type { HistoryStats, RemoteHarnessOptions } from "./remote-harness.js";
export { HistoryStore } from "./history-store.js";
export type { HistoryStoreLimits } from "./history-store.js";
export { ActorsClient, DEFAULT_ACTOR_CODEC } from "./actors-client.js";
export type { ActorSnapshot, ActorSummary, ActorsClientOptions, NodeInfo } from "./actors-client.js";
export { snapshotClassesOf } from "./actor-table.js";
export type { SnapshotAware, SnapshotClass } from "./actor-table.js";
export type { NodeLogger } from "./logger.js";
export {
  END_CLOSE_WAIT_MS,
  HARNESS_MAX_RECEIVE_BYTES,
  HISTORY_CACHE_MAX_EVENTS,
  HISTORY_CACHE_MAX_SESSIONS,
  SNAPSHOT_CHUNK_BYTES,
} from "./limits.js";
export { serveReadyProbe, type ReadyProbe } from "./readyz.js";
