// Size and time limits of the Harness protocol. Invariant: both ends of a Connect stream accept the same
// largest frame, snapshots never need more than gRPC's default because they are chunked, and every
// cache or wait a node or host keeps for a stream is bounded by a constant named here or by a limit of
// the limits table.
import { DEFAULT_LIMITS, type Limits } from "../limits/index.js";

/** A full Start.history carries a session's whole prior journal, so Connect frames may reach this size. */
export const HARNESS_MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

/**
 * The longest a host waits between two attempts to dial a harness node it could not reach (ms). gRPC's
 * own ceiling is 120 s, which left a node that came back after a long outage refused for up to two
 * minutes; with this bound a node that listens again is used within 2 s of its return.
 */
export const NODE_RECONNECT_BACKOFF_MS = 2_000;

/** Channel options of every host connection to a harness node (bounded reconnect backoff). */
export const NODE_CHANNEL_OPTIONS = {
  "grpc.initial_reconnect_backoff_ms": NODE_RECONNECT_BACKOFF_MS / 2,
  "grpc.max_reconnect_backoff_ms": NODE_RECONNECT_BACKOFF_MS,
} as const;

/** The size of a snapshot data chunk on the Actors service. */
export const SNAPSHOT_CHUNK_BYTES = 1024 * 1024;

/**
 * Snapshots up to this size are restored in one RestoreActorWhole message (to a node that serves it)
 * instead of a header/chunks/trailer stream: one message and one answer. It stays below gRPC's default
 * 4 MiB receive limit, so a third-party node that kept that default still accepts it; a 1 MB actor
 * state (~1.2 MB encoded) is one message.
 */
export const WHOLE_RESTORE_MAX_BYTES = 3 * 1024 * 1024;

/**
 * History uploads (docs/protocol.md §8.10): a full history whose events encode to more than
 * UPLOAD_HISTORY_ABOVE_BYTES is uploaded with PutHistory (to a node that offers it) instead of riding
 * in one Start frame, in messages of about HISTORY_CHUNK_BYTES of events each (an event larger than a
 * chunk travels alone). Below the threshold one Start frame is cheaper than an extra call; far above
 * it a Start frame would approach HARNESS_MAX_RECEIVE_BYTES, which no session's history may then pass.
 */
export const UPLOAD_HISTORY_ABOVE_BYTES = 4 * 1024 * 1024;
export const HISTORY_CHUNK_BYTES = 1024 * 1024;

/**
 * Bounds of a node's incremental-history cache (docs/protocol.md §8.8). Counted in decoded events, not
 * bytes, because that is what the node holds and measuring bytes would re-encode every event. At the
 * ~0.7–1 KiB a decoded event takes on the heap (an echo turn's events measure ~0.7 KiB), 200,000
 * events keep the cache near 200 MiB at worst, and 256 sessions cover a busy node's live sessions.
 * Past either bound the least recently used session goes (its host then resends the full history once).
 */
export const HISTORY_CACHE_MAX_SESSIONS = 256;
export const HISTORY_CACHE_MAX_EVENTS = 200_000;

/**
 * How long RemoteHarness waits, after END, for the node to finish the stream with its OK status before
 * it cancels the call (docs/protocol.md §4.6). A node that follows §4.1 closes at once.
 */
export const END_CLOSE_WAIT_MS = 1000;

/**
 * What a host lets one harness node cost it: the deadline of every call it makes to the node and of
 * every turn. Defaults, units and reasons are rows of the limits table (src/limits/table.ts); a Host
 * passes its configured values.
 */
export type NodeLimits = Pick<
  Limits,
  "nodeCallMs" | "snapshotMs" | "historyUploadMs" | "turnMs" | "snapshotBytes" | VmLimitName | TurnLimitName
>;

/** What one whole-VM snapshot of a vm-runtime guest may cost (docs/runtimes.md, "vm"). */
export type VmSnapshotLimitName = "vmSnapshotBytes" | "vmSnapshotMs";
/** What a vm runtime may cost: its snapshots and how many guests it runs at once. */
export type VmLimitName = VmSnapshotLimitName | "vmGuests";
export type VmLimits = Pick<Limits, VmLimitName>;
export type VmSnapshotLimits = Pick<Limits, VmSnapshotLimitName>;

/** What one turn of a node may make the host do (checked by RemoteHarness before anything is journaled). */
export type TurnLimitName = "eventBytes" | "turnEvents" | "turnBytes" | "turnModelCalls" | "turnToolCalls";
export type TurnLimits = Pick<Limits, TurnLimitName>;

export const DEFAULT_NODE_LIMITS: NodeLimits = DEFAULT_LIMITS;
