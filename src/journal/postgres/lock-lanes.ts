// The lock connections ("lanes") of the PostgreSQL session locks (lock.ts), on a pool of their own.
// Invariants: a session's key always maps to the same lane; a lane runs one statement at a time, in the
// order they were queued; a lane whose connection fails is destroyed — its backend, and every lock it
// held, end with it — and each lock granted on it is reported lost once.
import pg from "pg";
import { ErrorCode, HostError } from "../../errors/index.js";
import type { Lane, Lock } from "./lock-types.js";

export class LockLanes {
  private pool: pg.Pool | undefined;
  private closed = false;
  readonly all: readonly Lane[];

  constructor(
    private readonly config: pg.PoolConfig,
    count: number,
    /** How long one statement on a lane may take (ms) before the lane is given up. */
    private readonly statementTimeoutMs: number,
    /** A lock granted on a lane whose connection died (marked lost and removed from the lane). */
    private readonly onLockLost: (lock: Lock) => void,
  ) {
    this.all = Array.from({ length: count }, () => ({
      client: undefined,
      queue: Promise.resolve(),
      locks: new Set<Lock>(),
    }));
  }

  /** The server process ids of the lane connections open now (diagnostics and tests). */
  get pids(): number[] {
    const pids: number[] = [];
    for (const lane of this.all) {
      const pid = (lane.client as { processID?: number | null } | undefined)?.processID;
      if (typeof pid === "number") pids.push(pid);
    }
    return pids;
  }

  /** No lane connects from now on. */
  closing(): void {
    this.closed = true;
  }

  /** Destroys every lane (dropping any lock left) and ends the pool. */
  async end(): Promise<void> {
    for (const lane of this.all) this.laneLost(lane, lane.client, new Error("session locks closed"));
    const pool = this.pool;
    this.pool = undefined;
    if (pool) await pool.end();
  }

  laneOf(key: string): Lane {
    const index = Number(BigInt.asUintN(64, BigInt(key)) % BigInt(this.all.length));
    return this.all[index]!;
  }

  /** Runs `fn` on the lane's connection after every statement queued before it; a failure ends the lane. */
  onLane<T>(lane: Lane, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const run = lane.queue.then(async () => {
      const client = lane.client ?? (await this.connectLane(lane));
      try {
        return await fn(client);
      } catch (err) {
        this.laneLost(lane, client, err instanceof Error ? err : new Error(String(err)));
        throw err;
      }
    });
    lane.queue = run.catch(() => undefined);
    return run;
  }

  private async connectLane(lane: Lane): Promise<pg.PoolClient> {
    if (this.pool === undefined) {
      if (this.closed) throw new HostError(ErrorCode.FailedPrecondition, "journal is closed");
      // keepAlive: a dead peer is noticed by TCP; query_timeout: a hung statement ends its lane.
      this.pool = new pg.Pool({
        ...this.config,
        max: this.all.length,
        keepAlive: true,
        query_timeout: this.statementTimeoutMs,
      });
      this.pool.on("error", () => undefined);
    }
    const client = await this.pool.connect();
    if (this.closed) {
      // Closed while connecting: hand it back at once, or the pool's end would wait for it forever.
      client.release(new Error("session locks closed"));
      throw new HostError(ErrorCode.FailedPrecondition, "journal is closed");
    }
    // An idle lane that drops loses its locks; its holders find out here rather than at their unlock.
    client.on("error", (err) => this.laneLost(lane, client, err));
    lane.client = client;
    return client;
  }

  /**
   * The lane's connection failed or is being closed: destroy it (its backend, and so every lock it
   * held, ends with it). Parked leases on it are dropped; locks in use are marked lost (fences cover
   * their operations) and let go when those end.
   */
  laneLost(lane: Lane, client: pg.PoolClient | undefined, err: Error): void {
    if (client === undefined || lane.client !== client) return; // already replaced and let go
    lane.client = undefined;
    for (const lock of [...lane.locks]) {
      // A lock still being taken, not granted on this connection, is judged by its own grant.
      if (lock.grantedOn !== client) continue;
      lock.lost = true;
      lock.letGoAsked = true;
      lane.locks.delete(lock);
      this.onLockLost(lock);
    }
    client.removeAllListeners("error");
    client.on("error", () => undefined);
    client.release(err);
  }
}
