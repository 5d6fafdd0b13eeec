// Multi-host session locks on PostgreSQL session-level advisory locks, kept between operations as
// leases. Invariants: at most one connection in the whole cluster holds a session's lock, and it holds
// it until this process lets it go (or that connection dies: PostgreSQL drops a dead backend's advisory
// locks). A lock whose operation ended is kept, parked, for at most `leaseMs` — so the same host's next
// operation on the session needs no round trip — and only while this process listens for release
// requests: another host that finds the session locked asks for it (NOTIFY on RELEASE_CHANNEL) and
// waits at most `handoverMs` for it; a parked lease is let go at once when asked, a lock in use when
// its operation ends. A second caller is refused (undefined) rather than queued past that wait.
import { createHash, randomUUID } from "node:crypto";
import pg from "pg";
import { z } from "zod";
import { ErrorCode, HostError } from "../errors/index.js";
import type { PgListener } from "./postgres-listen.js";

/** How long close() waits for its explicit unlocks before destroying the lock connections (ms). */
const CLOSE_UNLOCK_WAIT_MS = 1_000;
/** The NOTIFY channel of lease release requests; the payload names the namespace and the session. */
export const RELEASE_CHANNEL = "harnesshost_release";
/** PostgreSQL's SQLSTATE for a lock wait that ran past lock_timeout. */
const LOCK_NOT_AVAILABLE = "55P03";

const ReleasePayload = z.object({ ns: z.string(), session: z.string().min(1), from: z.string() });

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
  /** Lock connections held at once, parked leases included. */
  readonly maxHeld: number;
  /** How long a released lock stays parked as a lease (ms); 0 lets every lock go when its operation ends. */
  readonly leaseMs: number;
  /** How long to wait for another host to hand a locked session over before refusing (ms); 0: no wait. */
  readonly handoverMs: number;
  /** Called, synchronously, the moment this process stops holding `session` (before its unlock is sent). */
  readonly onLetGo: (session: string) => void;
}

type LockState = "taking" | "busy" | "parked";

interface Lock {
  readonly session: string;
  readonly key: string;
  state: LockState;
  /** Another host asked for the session (or a write showed it moved): let go when the operation ends. */
  letGoAsked: boolean;
  client: pg.PoolClient | undefined;
  /** Hands the connection back to the pool (destroying it when given an error); set once the lock is held. */
  giveBack: ((err?: Error) => void) | undefined;
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

/**
 * Hands out session locks, each on its own connection from a dedicated pool (separate from the journal's
 * pool, so sessions held for the length of an Exec can never starve the appends that Exec makes).
 * Within one process a session in use is refused without a round trip, and a parked one is taken up
 * without one.
 */
export class PgSessionLocks {
  private pool: pg.Pool | undefined;
  /** Every session this process holds (or is taking), by uid; a Map keeps parked ones oldest first. */
  private readonly locks = new Map<string, Lock>();
  /** Connections holding a lock (unlock under way included), each with its give-back, so close() can unlock them. */
  private readonly lockClients = new Map<pg.PoolClient, (err?: Error) => void>();
  private listening: Promise<unknown> | undefined;
  private stopListening: (() => Promise<void>) | undefined;
  private closed = false;
  /** Names this process's requests, so it does not answer its own. */
  private readonly id = randomUUID();

  constructor(
    private readonly config: pg.PoolConfig,
    private readonly namespace: string,
    private readonly listener: PgListener,
    private readonly opts: SessionLockOptions,
  ) {}

  /** Sessions this process holds parked as leases (diagnostics and tests). */
  get parked(): readonly string[] {
    return [...this.locks.values()].filter((l) => l.state === "parked").map((l) => l.session);
  }

  /**
   * Takes the session's lock. `readAfter` (a complete statement without parameters, its literals
   * escaped by the caller) runs right after the lock statement in the same round trip, as a statement
   * of its own: it reads what the previous holder committed before releasing. Not read when a parked
   * lease is taken up (`resumed`).
   */
  async tryLock<R = never>(session: string, readAfter?: string): Promise<HeldLock<R> | undefined> {
    const existing = this.locks.get(session);
    if (existing !== undefined) {
      if (existing.state !== "parked") return undefined;
      this.unpark(existing);
      existing.state = "busy";
      return { release: this.releaser(existing), rows: [], resumed: true };
    }
    // Once per process: a lease is parked only while release requests can be heard.
    await this.listenForRequests();
    if (this.locks.get(session) !== undefined) return this.tryLock(session, readAfter);
    if (this.locks.size >= this.opts.maxHeld) {
      const victim = [...this.locks.values()].find((l) => l.state === "parked");
      // Refuse rather than queue: a "try" lock must not wait for another session's operation.
      if (victim === undefined)
        throw new HostError(ErrorCode.Unavailable, `all ${this.opts.maxHeld} session-lock connections are in use`);
      void this.letGo(victim);
    }
    // Reserve before the first await so two callers in this process cannot both reach the database.
    const lock: Lock = {
      session,
      key: sessionLockKey(this.namespace, session),
      state: "taking",
      letGoAsked: false,
      client: undefined,
      giveBack: undefined,
      timer: undefined,
    };
    this.locks.set(session, lock);
    let client: pg.PoolClient;
    try {
      client = await this.lockPool().connect();
    } catch (err) {
      this.locks.delete(session);
      throw err;
    }
    lock.client = client;
    // A held lock's connection sits checked out and idle; a dropped one loses the lock, so a parked
    // lease on it is let go (fencing still covers an operation that was running on it).
    const onError = (): void => {
      if (this.locks.get(session) === lock && lock.state === "parked") void this.letGo(lock);
      else lock.letGoAsked = true;
    };
    client.on("error", onError);
    let givenBack = false;
    const giveBack = (err?: Error): void => {
      if (givenBack) return;
      givenBack = true;
      client.removeListener("error", onError);
      this.lockClients.delete(client);
      client.release(err);
    };
    let rows: readonly R[] | undefined;
    try {
      rows = await this.lockOn<R>(client, lock, readAfter);
    } catch (err) {
      if (this.locks.get(session) === lock) this.locks.delete(session);
      giveBack(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
    if (rows === undefined) {
      if (this.locks.get(session) === lock) this.locks.delete(session);
      giveBack();
      return undefined;
    }
    if (this.locks.get(session) !== lock) {
      // Closed while taking it: ending the connection's backend drops the lock just granted.
      giveBack(new Error("session locks closed"));
      return undefined;
    }
    this.lockClients.set(client, giveBack);
    lock.state = "busy";
    lock.giveBack = giveBack;
    return { release: this.releaser(lock), rows, resumed: false };
  }

  /** The holder of `session` is to let it go when its operation ends, not park it (a write showed it moved). */
  distrust(session: string): void {
    const lock = this.locks.get(session);
    if (lock !== undefined) lock.letGoAsked = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool;
    this.pool = undefined;
    await this.stopListening?.().catch(() => undefined);
    for (const lock of this.locks.values()) clearTimeout(lock.timer);
    // Unlock explicitly first, so the sessions are free for other hosts when close() returns (a
    // destroyed connection also drops its locks, but only once the server notices its backend is
    // gone). Bounded: an unresponsive server must not hold up shutdown.
    const clients = [...this.lockClients];
    const unlocking = clients.map(([c]) =>
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
    for (const lock of [...this.locks.values()]) this.forget(lock);
    for (const [, giveBack] of clients) giveBack(new Error("session locks closed"));
    if (pool) await pool.end();
  }

  /**
   * The lock statement (and `readAfter`) on `client`: the rows of readAfter ([] without one) when the
   * lock was granted, undefined when another connection holds it. A refused try asks the holder to
   * let the session go and waits for it at most handoverMs.
   */
  private async lockOn<R>(client: pg.PoolClient, lock: Lock, readAfter: string | undefined): Promise<R[] | undefined> {
    const after = readAfter === undefined ? "" : `; ${readAfter}`;
    // Several statements in one simple query: each takes its own snapshot (READ COMMITTED), so the read
    // sees every commit made before the lock was granted. The key is a decimal integer.
    const tried = await multi(client, `SELECT pg_try_advisory_lock(${lock.key}::bigint) AS locked${after}`);
    if (tried[0]?.rows[0]?.locked === true) return (tried[1]?.rows ?? []) as R[];
    if (this.opts.handoverMs <= 0) return undefined;
    await client.query("SELECT pg_notify($1, $2)", [
      RELEASE_CHANNEL,
      JSON.stringify({ ns: this.namespace, session: lock.session, from: this.id }),
    ]);
    try {
      // SET LOCAL: the timeout covers this query's implicit transaction only.
      const waited = await multi(
        client,
        `SET LOCAL lock_timeout = ${Math.ceil(this.opts.handoverMs)}; SELECT pg_advisory_lock(${lock.key}::bigint)${after}`,
      );
      return (waited[2]?.rows ?? []) as R[];
    } catch (err) {
      if ((err as { code?: unknown } | null)?.code === LOCK_NOT_AVAILABLE) return undefined;
      throw err;
    }
  }

  private releaser(lock: Lock): SessionLockRelease {
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      if (this.locks.get(lock.session) !== lock || lock.state !== "busy") return;
      const keep =
        !lock.letGoAsked && !this.closed && this.opts.leaseMs > 0 && this.listener.listening(RELEASE_CHANNEL);
      if (!keep) return this.letGo(lock);
      lock.state = "parked";
      // Re-inserted: the Map's order is the order leases were parked, oldest first, for eviction.
      this.locks.delete(lock.session);
      this.locks.set(lock.session, lock);
      lock.timer = setTimeout(() => void this.letGo(lock), this.opts.leaseMs);
      lock.timer.unref();
    };
  }

  private unpark(lock: Lock): void {
    clearTimeout(lock.timer);
    lock.timer = undefined;
  }

  /** Stops holding `lock` now (onLetGo), then unlocks it; a failed unlock destroys the connection. */
  private async letGo(lock: Lock): Promise<void> {
    if (this.locks.get(lock.session) !== lock) return;
    this.forget(lock);
    const { client, giveBack } = lock;
    if (client === undefined || giveBack === undefined) return;
    try {
      await client.query({
        name: "hh_session_unlock",
        text: "SELECT pg_advisory_unlock($1::bigint)",
        values: [lock.key],
      });
      giveBack();
    } catch (err) {
      // Destroying the connection ends its backend, which drops the lock with it.
      giveBack(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Removes `lock` from the held set and tells the journal, synchronously. */
  private forget(lock: Lock): void {
    this.unpark(lock);
    this.locks.delete(lock.session);
    this.opts.onLetGo(lock.session);
  }

  /** Another host asked for `session`: a parked lease goes now, a lock in use when its operation ends. */
  private onReleaseRequest(payload: string): void {
    let parsed: z.infer<typeof ReleasePayload>;
    try {
      parsed = ReleasePayload.parse(JSON.parse(payload));
    } catch {
      return; // not ours (or malformed): ignored
    }
    if (parsed.ns !== this.namespace || parsed.from === this.id) return;
    const lock = this.locks.get(parsed.session);
    if (lock === undefined) return;
    if (lock.state === "parked") void this.letGo(lock);
    else lock.letGoAsked = true;
  }

  /** Starts listening for release requests once, when leases are on; a lost connection lets every parked lease go. */
  private listenForRequests(): Promise<unknown> | undefined {
    if (this.listening !== undefined || this.opts.leaseMs <= 0 || this.closed) return this.listening;
    const stopLost = this.listener.onLost(() => {
      for (const lock of [...this.locks.values()]) if (lock.state === "parked") void this.letGo(lock);
    });
    this.listening = this.listener
      .listen(RELEASE_CHANNEL, (payload) => this.onReleaseRequest(payload))
      .then(
        (stop) => {
          this.stopListening = async () => {
            stopLost();
            await stop();
          };
        },
        () => stopLost(),
      );
    return this.listening;
  }

  private lockPool(): pg.Pool {
    if (this.closed) throw new HostError(ErrorCode.FailedPrecondition, "journal is closed");
    if (!this.pool) {
      this.pool = new pg.Pool({ ...this.config, max: this.opts.maxHeld });
      this.pool.on("error", () => undefined);
    }
    return this.pool;
  }
}

/** A simple query of one or more statements: its results, one per statement. */
async function multi(client: pg.PoolClient, text: string): Promise<pg.QueryResult[]> {
  const results = (await client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
  return Array.isArray(results) ? results : [results];
}
