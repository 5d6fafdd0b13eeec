// Connecting the PostgreSQL journal: its options (constructor, URL parameters, defaults), the pool, the
// schema check and the session-lock machinery. Invariant: every option is checked before anything
// connects, so a bad value leaves nothing open; a failed schema check or connection ends the pool.
import pg from "pg";
import { ErrorCode, HostError } from "../../errors/index.js";
import type { GroupCommitOptions } from "../commit-queue.js";
import { PgCancelChannel } from "./cancel.js";
import { HeldSessions } from "./held.js";
import { PgListener } from "./listen.js";
import { PgSessionLocks } from "./lock.js";
import { migrate, PgSchemaName, quoteIdent } from "./schema.js";

export interface PostgresJournalOptions {
  /** PostgreSQL schema holding every table (created if missing); default: the server's search_path. */
  readonly schema?: string;
  /** Connections in the journal's pool (default 10). */
  readonly poolSize?: number;
  /**
   * Sessions this host holds locked at once, in use and parked as leases (default 256); a lock wanted
   * past it lets the oldest parked lease go, or is refused UNAVAILABLE when none is parked. Each held
   * lock takes a slot of PostgreSQL's shared lock table (max_locks_per_transaction × max_connections,
   * 6,400 by default) until it is let go, so hosts × maxSessionLocks must stay well under it.
   */
  readonly maxSessionLocks?: number;
  /**
   * Connections the session locks are spread over (default 4): a session always uses the same one,
   * and each runs one lock statement at a time (each a fraction of a ms), so a few carry hundreds of
   * sessions; one more is opened to listen for cancel and release requests.
   */
  readonly sessionLockConnections?: number;
  /**
   * How long, in ms, a session's lock stays held as a lease after this host's operation on it ends
   * (default SESSION_LEASE_MS, 5,000). This host's next operation on the session within it takes no lock
   * round trip and reads no session row; another host that wants the session asks for it and gets it as
   * soon as this host hears the request. 0: every lock is let go when its operation ends (one lock and
   * one unlock round trip per operation).
   */
  readonly sessionLeaseMs?: number;
  /**
   * How long, in ms, this host waits for another host to hand over a session it holds before refusing
   * the operation ABORTED (default SESSION_HANDOVER_MS, 500). A lease is handed over in about one round
   * trip; an operation in progress is not — its session is refused after this wait, as before leases.
   */
  readonly sessionHandoverMs?: number;
  /**
   * How long, in ms, one statement on a lock connection may take (default 10,000) before the connection
   * is given up: its backend, and every lock it holds, go with it; parked leases on it are dropped and
   * the call that waited is refused UNAVAILABLE. Lock statements take a fraction of a ms, but the row
   * read that comes with a lock waits behind a lock on the sessions table (a migration, say), and a
   * connection to a server that stopped answering would otherwise stall its sessions until TCP gives up.
   */
  readonly sessionLockStatementTimeoutMs?: number;
  /**
   * Group commit (default on, `maxBatch` 256 writes): appends that arrive in the same event-loop turn,
   * and every append queued while a batch is committing, share one transaction on one connection (one
   * WAL flush) — one batch in flight per journal. `false`: each append is its own transaction on its
   * own pooled connection, several in parallel (the one-transaction-per-append baseline).
   */
  readonly groupCommit?: boolean | GroupCommitOptions;
}

/** Default `sessionLeaseMs`: long enough to cover the gap between a client's turns, short enough that
 * a host gone quiet keeps no session from others for long (they ask for it anyway). */
export const SESSION_LEASE_MS = 5_000;
/** Default `sessionHandoverMs`: many round trips, and an event-loop stall, of a loaded host. */
export const SESSION_HANDOVER_MS = 500;

/** What a PostgresJournal is built on: its pool, schema, locks, held sessions and cancel channel. */
export interface PgConnection {
  readonly pool: pg.Pool;
  readonly schema: string | undefined;
  readonly locks: PgSessionLocks;
  readonly held: HeldSessions;
  readonly listener: PgListener;
  readonly cancels: PgCancelChannel;
  readonly groupCommit: boolean | GroupCommitOptions;
}

/**
 * Connects, creates or checks the schema (FailedPrecondition when its stamp is newer than this build).
 * The schema comes from `opts.schema`, else from a `?schema=NAME` URL parameter (so `openJournal`
 * URLs can name one), else the server's default search_path; the session-lock options likewise from
 * `opts`, else from `max_session_locks`, `session_lock_connections`, `session_lease_ms` and
 * `session_handover_ms` URL parameters, else their defaults.
 */
export async function connect(url: string, opts: PostgresJournalOptions): Promise<PgConnection> {
  const target = splitUrlParams(url);
  const schema = parseSchema(opts.schema ?? target.schema);
  const lockOpts = { ...target.lockOptions, ...definedOnly(opts) };
  // Checked before anything connects, so a bad value leaves nothing open.
  const lockSettings = {
    maxHeld: wholeAtLeast(1, lockOpts.maxSessionLocks, 256, "maxSessionLocks"),
    lanes: wholeAtLeast(1, lockOpts.sessionLockConnections, 4, "sessionLockConnections"),
    leaseMs: wholeAtLeast(0, lockOpts.sessionLeaseMs, SESSION_LEASE_MS, "sessionLeaseMs"),
    handoverMs: wholeAtLeast(0, lockOpts.sessionHandoverMs, SESSION_HANDOVER_MS, "sessionHandoverMs"),
    statementTimeoutMs: wholeAtLeast(1, opts.sessionLockStatementTimeoutMs, 10_000, "sessionLockStatementTimeoutMs"),
  };
  const config = poolConfig(target.url, schema);
  const pool = new pg.Pool({ ...config, max: wholeAtLeast(1, opts.poolSize, 10, "poolSize") });
  // An idle connection that drops is removed by the pool; the next checkout reconnects.
  pool.on("error", () => undefined);
  try {
    const client = await pool.connect();
    try {
      await migrate(client, schema);
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    if (err instanceof HostError) throw err;
    if (isConnectionError(err)) {
      throw new HostError(ErrorCode.Unavailable, `cannot connect to the PostgreSQL journal: ${errorText(err)}`, {
        cause: err,
      });
    }
    throw err;
  }
  const held = new HeldSessions();
  const listener = new PgListener(config);
  const locks = new PgSessionLocks(config, schema ?? "", listener, {
    ...lockSettings,
    onLetGo: (session) => held.drop(session),
    onLost: (session) => held.forget(session),
  });
  return {
    pool,
    schema,
    locks,
    held,
    listener,
    cancels: new PgCancelChannel(listener, schema ?? ""),
    groupCommit: opts.groupCommit ?? true,
  };
}

function parseSchema(schema: string | undefined): string | undefined {
  if (schema === undefined) return undefined;
  const parsed = PgSchemaName.safeParse(schema);
  if (!parsed.success)
    throw new HostError(ErrorCode.InvalidArgument, `invalid PostgreSQL schema name ${JSON.stringify(schema)}`);
  return parsed.data;
}

/** Removes a `schema` query parameter (ours, not libpq's) from a postgres:// URL. */
/** The session-lock options a journal URL may carry, by query parameter (docs/scaling.md). */
type LockOptions = Pick<
  PostgresJournalOptions,
  "maxSessionLocks" | "sessionLockConnections" | "sessionLeaseMs" | "sessionHandoverMs"
>;
const LOCK_URL_PARAMS: Readonly<Record<string, keyof LockOptions>> = {
  max_session_locks: "maxSessionLocks",
  session_lock_connections: "sessionLockConnections",
  session_lease_ms: "sessionLeaseMs",
  session_handover_ms: "sessionHandoverMs",
};

/**
 * Takes harnesshost's own query parameters off a journal URL — `schema` and the session-lock options
 * (`session_lease_ms=0`, …) — so `serve --journal URL` can set them; the rest goes to the driver.
 * A lock parameter that is not a decimal integer is INVALID_ARGUMENT naming it.
 */
function splitUrlParams(url: string): { url: string; schema: string | undefined; lockOptions: LockOptions } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, schema: undefined, lockOptions: {} };
  }
  const lockOptions: { -readonly [K in keyof LockOptions]: number } = {};
  let changed = false;
  for (const [param, option] of Object.entries(LOCK_URL_PARAMS)) {
    const text = parsed.searchParams.get(param);
    if (text === null) continue;
    if (!/^\d{1,15}$/.test(text))
      throw new HostError(
        ErrorCode.InvalidArgument,
        `journal URL parameter ${param} must be a whole number, got ${JSON.stringify(text)}`,
      );
    lockOptions[option] = Number(text);
    parsed.searchParams.delete(param);
    changed = true;
  }
  const schema = parsed.searchParams.get("schema") ?? undefined;
  if (schema !== undefined) {
    parsed.searchParams.delete("schema");
    changed = true;
  }
  return { url: changed ? parsed.toString() : url, schema, lockOptions };
}

/** The options given, without the ones left undefined (so they do not mask the URL's). */
function definedOnly(opts: PostgresJournalOptions): LockOptions {
  const out: { -readonly [K in keyof LockOptions]: number } = {};
  for (const option of Object.values(LOCK_URL_PARAMS)) {
    const value = opts[option];
    if (value !== undefined) out[option] = value;
  }
  return out;
}

/** `value` (or `fallback` when absent) as a whole number of at least `min`; INVALID_ARGUMENT otherwise. */
function wholeAtLeast(min: 0 | 1, value: number | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min)
    throw new HostError(
      ErrorCode.InvalidArgument,
      `${what} must be a ${min === 0 ? "non-negative" : "positive"} integer, got ${value}`,
    );
  return value;
}

/** The pool settings shared by the journal pool and the session-lock pool: URL plus per-connection search_path. */
function poolConfig(url: string, schema: string | undefined): pg.PoolConfig {
  const config: pg.PoolConfig = { connectionString: url };
  if (schema !== undefined) {
    const setPath = `SET search_path TO ${quoteIdent(schema)}`;
    config.onConnect = async (client: pg.ClientBase) => {
      await client.query(setPath);
    };
  }
  return config;
}

function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^E[A-Z]+$/.test(code);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
