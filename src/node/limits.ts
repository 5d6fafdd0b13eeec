// Size limits of the Harness protocol. Invariant: both ends of a Connect stream accept the same
// largest frame, and snapshots never need more than gRPC's default because they are chunked.

/** Start.history carries a session's whole prior journal, so Connect frames may reach this size. */
export const HARNESS_MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

/** The size of a snapshot data chunk on the Actors service. */
export const SNAPSHOT_CHUNK_BYTES = 1024 * 1024;
