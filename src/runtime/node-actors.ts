// Memory snapshots of actors hosted in a harness node, moved between the node's Actors service and
// the host's snapshot store. Invariant: a blob is stored durably (and its digest known) before any ref
// to it exists — one the node wrote beside the host included — and a restore installs exactly the
// bytes whose digest the ref names (the store re-hashes).
import { ErrorCode, HostError } from "../errors/index.js";
import type { ActorsClient } from "../node/actors-client.js";
import { parseDigest, type SnapshotStore } from "../snapshot/store.js";
import type { SnapshotRef } from "./types.js";
import { memoryRef } from "../snapshot/ref.js";

export async function snapshotActorToStore(
  actors: ActorsClient,
  store: SnapshotStore,
  session: string,
  signal?: AbortSignal,
  /** The node runs beside the host and writes snapshots to files (docs/protocol.md §8.11). */
  toFile = false,
): Promise<SnapshotRef> {
  if (toFile && store.stageFile !== undefined) {
    // The node writes and fsyncs the blob in the store's staging place; only its trailer travels.
    const staged = await store.stageFile();
    try {
      const written = await actors.snapshotToFile(session, staged.path, signal !== undefined ? { signal } : {});
      return memoryRef(session, await staged.commit(written.sha256, written.size));
    } finally {
      await staged.discard();
    }
  }
  const snap = await actors.snapshotWithTrailer(session, signal !== undefined ? { signal } : {});
  // The client hashed the bytes as they arrived (and checked the node's trailer): not hashed again.
  const digest = await store.put(snap.bytes, { sha256: snap.sha256 });
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
  // The store re-hashed the bytes to the digest: the client need not hash them again.
  await actors.restore(session, bytes, { replace: true, sha256: parseDigest(ref.externalUri) });
}
