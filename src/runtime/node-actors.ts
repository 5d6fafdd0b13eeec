// Memory snapshots of actors hosted in a harness node, moved between the node's Actors service and
// the host's snapshot store. Invariant: a blob is stored (and its digest known) before any ref to it
// exists, and a restore installs exactly the bytes whose digest the ref names (the store re-hashes).
import { ErrorCode, HostError } from "../errors/index.js";
import type { ActorsClient } from "../node/actors-client.js";
import type { SnapshotStore } from "../snapshot/store.js";
import type { SnapshotRef } from "./types.js";
import { memoryRef } from "../snapshot/ref.js";

export async function snapshotActorToStore(
  actors: ActorsClient,
  store: SnapshotStore,
  session: string,
  signal?: AbortSignal,
): Promise<SnapshotRef> {
  const bytes = await actors.snapshot(session, signal !== undefined ? { signal } : {});
  const digest = await store.put(bytes);
  return memoryRef(session, digest);
}

export async function restoreActorFromStore(
  actors: ActorsClient,
  store: SnapshotStore,
  ref: SnapshotRef,
  session: string,
): Promise<void> {
  if (!ref.memory || ref.externalUri === "") {
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `snapshot ref of ${ref.local || session} holds no memory snapshot to restore`,
    );
  }
  const bytes = await store.get(ref.externalUri);
  await actors.restore(session, bytes, { replace: true });
}
