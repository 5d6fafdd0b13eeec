// Multi-host session locks on PostgreSQL session-level advisory locks, held on a few shared lock
// connections ("lanes") and kept between operations as leases. Invariants: at most one backend in the
// whole cluster holds a session's lock; this process holds a session until it lets it go, or until the
// lane holding it dies (PostgreSQL drops a dead backend's advisory locks — every lock of that lane is
// then counted lost, a parked one dropped at once). A session always maps to the same lane and a lane
// runs one statement at a time, so an unlock and the next lock of the same session reach the server in
// the order they were issued. A lock whose operation ended is kept, parked, for at most `leaseMs` — so
// this host's next operation on the session needs no round trip — and only while this process listens
// for release requests: another host that finds the session locked asks for it (NOTIFY on
// RELEASE_CHANNEL) and keeps trying for at most `handoverMs`; a parked lease is let go at once when
// asked, a lock in use when its operation ends. A caller is refused (undefined) rather than queued past
// that wait.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { ErrorCode, HostError } from "../../errors/index.js";
import type { PgListener } from "./listen.js";
import { LockLanes } from "./lock-lanes.js";
import {
  CLOSE_UNLOCK_WAIT_MS,
  HANDOVER_FIRST_PAUSE_MS,
  HANDOVER_MAX_PAUSE_MS,
  type HeldLock,
  type Lock,
  RELEASE_CHANNEL,
  ReleasePayload,
  type SessionLockOptions,
  type SessionLockRelease,
  sessionLockKey,
} from "./lock-types.js";

export {
  type HeldLock,
  RELEASE_CHANNEL,
  type SessionLockOptions,
  type SessionLockRelease,
  sessionLockKey,
} from "./lock-types.js";

/**
 * Hands out session locks on `lanes` connections of a dedicated pool (separate from the journal's pool,
 * so lock traffic never waits behind appends). Within one process a session in use is refused without
 * a round trip, and a parked one is taken up without one.
 */
export class PgSessionLocks {
  private readonly lanes: LockLanes;
  /** Every session this process holds (or is taking), by uid; the Map keeps parked ones oldest first. */
  private readonly locks = new Map<string, Lock>();
  private listening: Promise<unknown> | undefined;
  private stopListening: (() => Promise<void>) | undefined;
  private closed = false;
  /** Names this process's requests, so it does not answer its own. */
  private readonly id = randomUUID();
  /** Handovers this process is waiting for, by session: each wakes when the holder says it let go. */
  private readonly waiting = new Map<string, Set<() => void>>();

  constructor(
    config: pg.PoolConfig,
    private readonly namespace: string,
    private readonly listener: PgListener,
    private readonly opts: SessionLockOptions,
  ) {
    this.lanes = new LockLanes(config, opts.lanes, opts.statementTimeoutMs, (lock) => {
      if (lock.state === "parked") this.forget(lock);
      else this.opts.onLost(lock.session);
    });
  }

  /** Sessions this process holds parked as leases, oldest first (diagnostics and tests). */
  get parked(): readonly string[] {
    return [...this.locks.values()].filter((l) => l.state === "parked").map((l) => l.session);
  }

  /** The server process ids of the lock connections open now (diagnostics and tests). */
  get lanePids(): number[] {
    return this.lanes.pids;
  }

  /** Sessions this process holds: in use by an operation (or being taken), and parked as leases. */
  counts(): { inUse: number; parked: number } {
    let parked = 0;
    for (const lock of this.locks.values()) if (lock.state === "parked") parked += 1;
    return { inUse: this.locks.size - parked, parked };
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
    if (this.closed) throw new HostError(ErrorCode.FailedPrecondition, "journal is closed");
    if (this.locks.has(session)) return this.tryLock(session, readAfter);
    if (this.locks.size >= this.opts.maxHeld) {
      const victim = [...this.locks.values()].find((l) => l.state === "parked");
      // Refuse rather than queue: a "try" lock must not wait for another session's operation.
      if (victim === undefined)
        throw new HostError(ErrorCode.Unavailable, `all ${this.opts.maxHeld} session locks are in use`);
      void this.letGo(victim);
    }
    const key = sessionLockKey(this.namespace, session);
    // Reserve before the first await so two callers in this process cannot both reach the database.
    const lock: Lock = {
      session,
      key,
      lane: this.lanes.laneOf(key),
      state: "taking",
      letGoAsked: false,
      askedFor: false,
      grantedOn: undefined,
      lost: false,
      timer: undefined,
    };
    this.locks.set(session, lock);
    lock.lane.locks.add(lock);
    let rows: R[] | undefined;
    try {
      rows = await this.take<R>(lock, readAfter);
    } catch (err) {
      this.drop(lock);
      if (err instanceof HostError) throw err;
      const reason = err instanceof Error ? err.message : String(err);
      throw new HostError(ErrorCode.Unavailable, `cannot take session ${session}'s lock: ${reason}`, { cause: err });
    }
    if (rows !== undefined && (lock.lost || this.locks.get(session) !== lock)) {
      // The granting connection died, or the locks closed, while the lock was being granted.
      void this.unlock(lock);
      rows = undefined;
    }
    if (rows === undefined) {
      this.drop(lock);
      return undefined;
    }
    lock.state = "busy";
    return { release: this.releaser(lock), rows, resumed: false };
  }

  /** The holder of `session` is to let it go when its operation ends, not park it (a write showed it moved). */
  distrust(session: string): void {
    const lock = this.locks.get(session);
    if (lock !== undefined) lock.letGoAsked = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.lanes.closing();
    await this.stopListening?.().catch(() => undefined);
    for (const lock of [...this.locks.values()]) this.forget(lock);
    // Unlock explicitly first, so the sessions are free for other hosts when close() returns (a
    // destroyed connection also drops its locks, but only once the server notices its backend is
    // gone). Bounded: an unresponsive server must not hold up shutdown.
    const unlocking = this.lanes.all.map((lane) =>
      lane.client === undefined
        ? Promise.resolve()
        : this.lanes
            .onLane(lane, (c) => c.query("SELECT pg_advisory_unlock_all()"))
            .then(
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
    // Destroying a lane ends its backend and so drops any lock left; pool.end() then finishes.
    await this.lanes.end();
  }

  /**
   * The lock statement (and `readAfter`): the rows of readAfter ([] without one) once the lock is
   * granted, undefined when another backend holds it. A refused first try asks the holder to let the
   * session go, in the same statement, and tries again — when the holder says it let go, or after
   * growing pauses — for at most handoverMs.
   */
  private async take<R>(lock: Lock, readAfter: string | undefined): Promise<R[] | undefined> {
    const after = readAfter === undefined ? "" : `; ${readAfter}`;
    // Several statements in one simple query: each takes its own snapshot (READ COMMITTED), so the read
    // sees every commit made before the lock was granted. The key is a decimal integer.
    const tryLock = `SELECT pg_try_advisory_lock(${lock.key}::bigint) AS locked`;
    const ask = JSON.stringify({ ns: this.namespace, session: lock.session, from: this.id, kind: "ask" });
    // The ask is sent only when the try fails, and delivered when the query's transaction commits.
    const tryOrAsk = `WITH t AS MATERIALIZED (${tryLock}) SELECT locked, CASE WHEN locked THEN NULL ELSE pg_notify('${RELEASE_CHANNEL}', ${pg.escapeLiteral(ask)}) END AS asked FROM t`;
    const attempt = async (text: string): Promise<R[] | undefined> => {
      const results = await this.lanes.onLane(lock.lane, async (c) => {
        const out = await multi(c, text);
        if (out[0]?.rows[0]?.locked === true) lock.grantedOn = c;
        return out;
      });
      return results[0]?.rows[0]?.locked === true ? ((results[1]?.rows ?? []) as R[]) : undefined;
    };
    if (this.opts.handoverMs <= 0) return attempt(tryLock + after);
    let released = false;
    const wake: { now?: () => void } = {};
    const onReleased = (): void => {
      released = true;
      wake.now?.();
    };
    // Waiting before asking, so the holder's answer cannot come first.
    const waiters = this.waiting.get(lock.session) ?? new Set();
    this.waiting.set(lock.session, waiters);
    waiters.add(onReleased);
    try {
      const first = await attempt(tryOrAsk + after);
      if (first !== undefined) return first;
      const deadline = Date.now() + this.opts.handoverMs;
      let pause = HANDOVER_FIRST_PAUSE_MS;
      while (Date.now() < deadline && this.locks.get(lock.session) === lock && !lock.lost) {
        if (!released) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, Math.min(pause, Math.max(1, deadline - Date.now())));
            wake.now = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake.now = undefined;
          pause = Math.min(pause * 2, HANDOVER_MAX_PAUSE_MS);
        }
        released = false;
        // A lock connection that dies during the wait is replaced by the next try's; keep waiting.
        const rows = await attempt(tryLock + after).catch(() => undefined);
        if (rows !== undefined) return rows;
      }
      return undefined;
    } finally {
      waiters.delete(onReleased);
      if (waiters.size === 0 && this.waiting.get(lock.session) === waiters) this.waiting.delete(lock.session);
    }
  }

  private releaser(lock: Lock): SessionLockRelease {
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      if (this.locks.get(lock.session) !== lock || lock.state !== "busy") return;
      const keep =
        !lock.letGoAsked &&
        !lock.lost &&
        !this.closed &&
        this.opts.leaseMs > 0 &&
        this.listener.listening(RELEASE_CHANNEL);
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

  /** Stops holding `lock` now (onLetGo), then unlocks it on its lane (queued, so in order). */
  private async letGo(lock: Lock): Promise<void> {
    if (this.locks.get(lock.session) !== lock) return;
    this.forget(lock);
    await this.unlock(lock);
  }

  private async unlock(lock: Lock): Promise<void> {
    lock.lane.locks.delete(lock);
    if (lock.lost || lock.grantedOn === undefined) return;
    const grantedOn = lock.grantedOn;
    // A host that asked is told in the same statement, once the lock is free (the NOTIFY is delivered
    // when the statement's transaction commits, after the unlock).
    const released = JSON.stringify({ ns: this.namespace, session: lock.session, from: this.id, kind: "released" });
    await this.lanes
      .onLane(lock.lane, async (c) => {
        // Another connection than the granting one: that backend died, and the lock with it.
        if (c !== grantedOn) return;
        await (lock.askedFor
          ? c.query({
              name: "hh_session_unlock_told",
              text: "SELECT pg_advisory_unlock($1::bigint), pg_notify($2, $3)",
              values: [lock.key, RELEASE_CHANNEL, released],
            })
          : c.query({ name: "hh_session_unlock", text: "SELECT pg_advisory_unlock($1::bigint)", values: [lock.key] }));
      })
      .catch(() => undefined); // a failed statement ended the lane, and its backend dropped the lock
  }

  /** Removes `lock` from the held set and tells the journal, synchronously. */
  private forget(lock: Lock): void {
    this.unpark(lock);
    if (this.locks.get(lock.session) === lock) {
      this.locks.delete(lock.session);
      this.opts.onLetGo(lock.session);
    }
  }

  /** A lock that was never (or is no longer) granted: out of every set, nothing to unlock. */
  private drop(lock: Lock): void {
    this.unpark(lock);
    if (this.locks.get(lock.session) === lock) this.locks.delete(lock.session);
    lock.lane.locks.delete(lock);
  }

  /**
   * Another host asked for `session`: a parked lease goes now, a lock in use when its operation ends
   * (each saying so as it unlocks). Or a holder says it let a session go that this process waits for.
   */
  private onReleaseRequest(payload: string): void {
    let parsed: ReturnType<typeof ReleasePayload.parse>;
    try {
      parsed = ReleasePayload.parse(JSON.parse(payload));
    } catch {
      return; // not ours (or malformed): ignored
    }
    if (parsed.ns !== this.namespace || parsed.from === this.id) return;
    if (parsed.kind === "released") {
      for (const wake of [...(this.waiting.get(parsed.session) ?? [])]) wake();
      return;
    }
    const lock = this.locks.get(parsed.session);
    if (lock === undefined) return;
    lock.askedFor = true;
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
}

/** A simple query of one or more statements: its results, one per statement. */
async function multi(client: pg.PoolClient, text: string): Promise<pg.QueryResult[]> {
  const results = (await client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
  return Array.isArray(results) ? results : [results];
}
