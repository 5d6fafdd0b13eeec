// Memory snapshots (docs/protocol.md §9): the actor-state codec and the content-addressed blob store.
// Invariant: this barrel only re-exports; behaviour lives in the named modules.
export { ACTOR_CODEC, decodeActor, encodeActor, type ActorCodecOptions, type ClassList } from "./codec.js";
export {
  collectGarbage,
  FsSnapshotStore,
  MemorySnapshotStore,
  parseDigest,
  type PutOptions,
  type SnapshotStore,
} from "./store.js";
