// The session-lock vocabulary of the PostgreSQL journal (lock.ts): the options, the locks and lanes it
// keeps, the release-request payload and each session's advisory-lock key. Invariant: a session's key
// depends only on the namespace (the journal's schema) and its uid, so every host computes the same one.
import { createHash } from "node:crypto";
import type pg from "pg";
import { z } from "zod";

/** How long close() waits for its explicit unlocks before destroying the lock connections (ms). */
export const CLOSE_UNLOCK_WAIT_MS = 1_000;
/** The NOTIFY channel of lease release requests; the payload names the namespace and the session. */
export const RELEASE_CHANNEL = "harnesshost_release";
/**
 * Between tries while waiting for a handover (ms): the first pause, doubling up to the largest. A try
 * is also made at once when the holder says it let the session go, so the pauses only cover a missed
 * notification.
 */
export const HANDOVER_FIRST_PAUSE_MS = 2;
export const HANDOVER_MAX_PAUSE_MS = 25;

/**
 * A release request ("ask", from the host that wants the session) or the holder's word that it let
 * the session go ("released", sent with the unlock). Hosts before "kind" send asks without it.
 */
export const ReleasePayload = z.object({
  ns: z.string(),
  session: z.string().min(1),
  from: z.string(),
  kind: z.enum(["ask", "released"]).default("ask"),
});

/** Releases a held session lock (parks it as a lease, or lets it go); idempotent. */
export type SessionLockRelease = () => Promise<void>;

/** A lock taken, and the rows of the statement read right after it in the same round trip. */
export interface HeldLock<R> {
  readonly release: SessionLockRelease;
  readonly rows: readonly R[];
  /**
   * True when this is a parked lease of this process taken up again: nothing was read (rows is empty)
   * and nobody else can have held the session since the previous operation here released it.
   */
  readonly resumed: boolean;
}

export interface SessionLockOptions {
  /** Sessions held at once, in use and parked; past it the oldest parked lease is let go, or the lock refused. */
  readonly maxHeld: number;
  /** Connections the locks are spread over. */
  readonly lanes: number;
  /** How long a released lock stays parked as a lease (ms); 0 lets every lock go when its operation ends. */
  readonly leaseMs: number;
  /** How long to keep trying for a session another host holds, after asking for it (ms); 0: one try. */
  readonly handoverMs: number;
  /**
   * How long one statement on a lock connection may take (ms) before the connection is given up —
   * its backend and every lock it holds with it — so a hung connection cannot stall its sessions.
   */
  readonly statementTimeoutMs: number;
  /** Called, synchronously, the moment this process stops holding `session` (before its unlock is sent). */
  readonly onLetGo: (session: string) => void;
  /** Called when the connection holding `session`'s lock, in use by an operation, died: the lock is gone. */
  readonly onLost: (session: string) => void;
}

export type LockState = "taking" | "busy" | "parked";

export interface Lane {
  client: pg.PoolClient | undefined;
  /** The tail of this lane's statements: each waits for the one before. */
  queue: Promise<unknown>;
  /** The locks this lane's backend holds or is taking. */
  readonly locks: Set<Lock>;
}

export interface Lock {
  readonly session: string;
  readonly key: string;
  readonly lane: Lane;
  state: LockState;
  /** Another host asked for the session (or a write showed it moved): let go when the operation ends. */
  letGoAsked: boolean;
  /** Another host asked for it: say "released" with the unlock, so its wait ends at once. */
  askedFor: boolean;
  /** The connection whose backend was granted the lock (the only one that can unlock it). */
  grantedOn: pg.PoolClient | undefined;
  /** That backend died: the lock is gone already, there is nothing to unlock. */
  lost: boolean;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The signed 64-bit advisory-lock key of a session: the first 8 bytes of
 * sha256("harnesshost-session\0<namespace>\0<uid>"), as a decimal string for a bigint parameter.
 * The namespace (the journal's schema) keeps two deployments sharing a database apart.
 */
export function sessionLockKey(namespace: string, session: string): string {
  const digest = createHash("sha256").update(`harnesshost-session\u0000${namespace}\u0000${session}`, "utf8").digest();
  return digest.readBigInt64BE(0).toString();
}
