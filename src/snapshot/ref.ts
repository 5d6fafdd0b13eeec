// The snapshot reference a LIFECYCLE_SUSPEND record carries (docs/protocol.md §7.2, §9.4). Invariant: a
// reference is either a session handle alone (memory false, no digest: resume by replay) or a session
// handle plus the "sha256:<hex>" digest of a blob in the snapshot store (memory true); sealed is false.

/** The journaled snapshot reference (LIFECYCLE_SUSPEND carries it as snapshot_* fields). */
export interface SnapshotRef {
  /** The session handle; every backend records its own session uid here. */
  readonly local: string;
  /** Memory backends: "sha256:<hex>" of the actor-state blob in the snapshot store. */
  readonly externalUri: string;
  readonly memory: boolean;
  readonly sealed: boolean;
}

/** A reference with no memory: the session resumes by replaying its journal. */
export function journalRef(session: string): SnapshotRef {
  return { local: session, externalUri: "", memory: false, sealed: false };
}

/** A reference to the actor-state blob `digest` ("sha256:<hex>") in the snapshot store. */
export function memoryRef(session: string, digest: string): SnapshotRef {
  return { local: session, externalUri: digest, memory: true, sealed: false };
}
