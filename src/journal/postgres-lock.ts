// Multi-host session locks on PostgreSQL session-level advisory locks. Invariant: at most one
// connection in the whole cluster holds a session's lock, and it holds it exactly until the returned
// release runs or that connection dies (PostgreSQL drops a dead backend's advisory locks), so a second
// host asking for the same session is refused rather than queued.
import { createHash } from "node:crypto";
import pg from "pg";
import { ErrorCode, HostError } from "../errors/index.js";

/** How long close() waits for its explicit unlocks before destroying the lock connections (ms). */
const CLOSE_UNLOCK_WAIT_MS = 1_000;

/** Releases a held session lock; idempotent. */
export type SessionLockRelease = () => Promise<void>;

/** A lock taken, and the rows of the statement read right after it in the same round trip. */
export interface HeldLock<R> {
  readonly release: SessionLockRelease;
  readonly rows: readonly R[];
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

/**
 * Hands out session locks, each on its own connection from a dedicated pool (separate from the journal's
 * pool, so sessions held for the length of an Exec can never starve the appends that Exec makes).
 * Within one process a session already held is refused without a round trip.
 */
export class PgSessionLocks {
  private pool: pg.Pool | undefined;
  /** Sessions held (or being acquired) by this process, each with the way to hand its connection back. */
  private readonly held = new Map<string, (err?: Error) => void>();
  /** The connection of each lock actually held, so close() can unlock before letting go of it. */
  private readonly lockClients = new Map<string, pg.PoolClient>();

  constructor(
    private readonly config: pg.PoolConfig,
    private readonly namespace: string,
    private readonly maxHeld: number,
  ) {}

  /**
   * Takes the session's lock without waiting. `readAfter` (a complete statement without parameters, its
   * literals escaped by the caller) runs right after the lock statement in the same round trip, as a
   * statement of its own: it reads what the previous holder committed before releasing.
   */
  async tryLock<R = never>(session: string, readAfter?: string): Promise<HeldLock<R> | undefined> {
    if (this.held.has(session)) return undefined;
    if (this.held.size >= this.maxHeld) {
      // Refuse rather than queue: a "try" lock must not wait for another session's release.
      throw new HostError(ErrorCode.Unavailable, `all ${this.maxHeld} session-lock connections are in use`);
    }
    const pool = this.lockPool();
    // Reserve before the first await so two callers in this process cannot both reach the database.
    this.held.set(session, () => this.held.delete(session));
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      this.held.delete(session);
      throw err;
    }
    // A held lock's connection sits checked out and idle; without a listener a dropped connection
    // would surface as an unhandled 'error' event. Losing it loses the lock, which fencing still covers.
    const onError = (): void => undefined;
    client.on("error", onError);
    const key = sessionLockKey(this.namespace, session);
    let givenBack = false;
    const giveBack = (err?: Error): void => {
      if (givenBack) return;
      givenBack = true;
      client.removeListener("error", onError);
      client.release(err);
      this.held.delete(session);
      this.lockClients.delete(session);
    };
    this.held.set(session, giveBack);
    let locked: boolean;
    let rows: readonly R[] = [];
    try {
      if (readAfter === undefined) {
        const result = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS locked", [
          key,
        ]);
        locked = result.rows[0]?.locked === true;
      } else {
        // Two statements in one simple query: each takes its own snapshot (READ COMMITTED), so the read
        // sees every commit made before the lock was granted. The key is a decimal integer.
        const results = (await client.query(
          `SELECT pg_try_advisory_lock(${key}::bigint) AS locked; ${readAfter}`,
        )) as unknown as pg.QueryResult[];
        if (!Array.isArray(results) || results.length !== 2) throw new Error("lock and read returned no two results");
        locked = results[0]?.rows[0]?.locked === true;
        rows = (results[1]?.rows ?? []) as R[];
      }
    } catch (err) {
      giveBack(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
    if (!locked) {
      giveBack();
      return undefined;
    }
    this.lockClients.set(session, client);
    let released = false;
    const release = async (): Promise<void> => {
      if (released || givenBack) return;
      released = true;
      try {
        await client.query({ name: "hh_session_unlock", text: "SELECT pg_advisory_unlock($1::bigint)", values: [key] });
        giveBack();
      } catch (err) {
        // Destroying the connection ends its backend, which drops the lock with it.
        giveBack(err instanceof Error ? err : new Error(String(err)));
      }
    };
    return { release, rows };
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    // Unlock explicitly first, so the sessions are free for other hosts when close() returns (a
    // destroyed connection also drops its locks, but only once the server notices its backend is
    // gone). Bounded: an unresponsive server must not hold up shutdown.
    const unlocking = [...this.lockClients.values()].map((c) =>
      c.query("SELECT pg_advisory_unlock_all()").then(
        () => undefined,
        () => undefined,
      ),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(unlocking),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_UNLOCK_WAIT_MS))),
    ]);
    clearTimeout(timer);
    // Destroying a held connection ends its backend and so drops any lock left; pool.end() then finishes.
    for (const giveBack of [...this.held.values()]) giveBack(new Error("session locks closed"));
    this.held.clear();
    this.lockClients.clear();
    if (pool) await pool.end();
  }

  private lockPool(): pg.Pool {
    if (!this.pool) {
      this.pool = new pg.Pool({ ...this.config, max: this.maxHeld });
      this.pool.on("error", () => undefined);
    }
    return this.pool;
  }
}
