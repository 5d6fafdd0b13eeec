// Content-addressed snapshot blobs in PostgreSQL (docs/protocol.md §9.4), for hosts that share one database. Invariant:
// a blob row and all its `bytea` chunks commit in one transaction, each digest is stored once however
// many checkpoints or fork children name it, and `get` returns bytes only after re-hashing them to the
// requested digest (a corrupt, short or missing blob is DataLoss naming the digest).
import { createHash } from "node:crypto";
import type pg from "pg";
import { ErrorCode, HostError } from "../errors/index.js";
import { PostgresJournal } from "../journal/postgres/journal.js";
import type { Journal } from "../journal/types.js";
import { migrate } from "../journal/postgres/schema.js";
import { inTransaction } from "../journal/postgres/transaction.js";
import { knownOrHashed, parseDigest, type PutOptions, type SnapshotStore } from "./store.js";

export interface PgSnapshotStoreOptions {
  /** Bytes per `snapshot_chunks` row (default 1 MiB). */
  readonly chunkBytes?: number;
}

const DEFAULT_CHUNK_BYTES = 1 << 20;
/** First key of the two-key advisory lock that serialises puts of one digest (an arbitrary constant). */
const PUT_LOCK_CLASS = 0x68687362; // "hhsb"

interface ChunkDbRow {
  size: string;
  chunks: number;
  idx: number | null;
  data: Buffer | null;
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The blob store kept in a journal's own database (its storage says snapshotsInJournal). */
export function snapshotStoreOf(journal: Journal): PgSnapshotStore {
  if (!(journal instanceof PostgresJournal))
    throw new HostError(ErrorCode.FailedPrecondition, `a ${journal.kind} journal keeps no snapshot blobs`);
  return new PgSnapshotStore(journal);
}

export class PgSnapshotStore implements SnapshotStore {
  private readonly pool: pg.Pool;
  private readonly chunkBytes: number;
  /** Set when built on a bare pool: the tables are created (or checked) before first use. */
  private ready: Promise<void> | undefined;

  /**
   * Built on a PostgresJournal it shares the journal's pool and schema (whose migration already created
   * the tables); built on a bare pool it runs the same migration in that pool's search_path first.
   */
  constructor(source: PostgresJournal | pg.Pool, opts: PgSnapshotStoreOptions = {}) {
    this.chunkBytes = opts.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    if (!Number.isSafeInteger(this.chunkBytes) || this.chunkBytes < 1) {
      throw new HostError(ErrorCode.InvalidArgument, `chunkBytes must be a positive integer, got ${this.chunkBytes}`);
    }
    if (source instanceof PostgresJournal) {
      this.pool = source.pool;
    } else {
      this.pool = source;
      this.ready = this.migrateBarePool(source);
      this.ready.catch(() => undefined); // surfaced by the first call that awaits it
    }
  }

  async put(bytes: Uint8Array, opts?: PutOptions): Promise<string> {
    const hex = knownOrHashed(bytes, opts);
    const digest = `sha256:${hex}`;
    await this.transaction(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [PUT_LOCK_CLASS, digest]);
      const existing = await readBlob(client, digest);
      if (existing !== undefined && intact(existing, hex)) return;
      // Absent, or present but damaged: (re)write it whole.
      await client.query("DELETE FROM snapshot_blobs WHERE digest = $1", [digest]);
      const chunks = Math.ceil(bytes.length / this.chunkBytes);
      await client.query("INSERT INTO snapshot_blobs (digest, size, chunks, created_at_ms) VALUES ($1, $2, $3, $4)", [
        digest,
        bytes.length,
        chunks,
        Date.now(),
      ]);
      const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let idx = 0; idx < chunks; idx += 1) {
        const data = view.subarray(idx * this.chunkBytes, (idx + 1) * this.chunkBytes);
        await client.query("INSERT INTO snapshot_chunks (digest, idx, data) VALUES ($1, $2, $3)", [digest, idx, data]);
      }
    });
    return digest;
  }

  async get(digest: string): Promise<Uint8Array> {
    const hex = parseDigest(digest);
    await this.tables();
    const blob = await readBlob(this.pool, digest);
    if (blob === undefined) throw new HostError(ErrorCode.DataLoss, `snapshot blob ${digest} is missing`);
    if (typeof blob === "string")
      throw new HostError(ErrorCode.DataLoss, `snapshot blob ${digest} is corrupt: ${blob}`);
    const actual = sha256(blob);
    if (actual !== hex) {
      throw new HostError(
        ErrorCode.DataLoss,
        `snapshot blob ${digest} is corrupt: its ${blob.length} bytes hash to sha256:${actual}`,
      );
    }
    return blob;
  }

  async has(digest: string): Promise<boolean> {
    parseDigest(digest);
    await this.tables();
    return (await this.pool.query("SELECT 1 FROM snapshot_blobs WHERE digest = $1", [digest])).rowCount === 1;
  }

  async delete(digest: string): Promise<void> {
    parseDigest(digest);
    await this.tables();
    await this.pool.query("DELETE FROM snapshot_blobs WHERE digest = $1", [digest]);
  }

  async list(): Promise<string[]> {
    await this.tables();
    const result = await this.pool.query<{ digest: string }>("SELECT digest FROM snapshot_blobs ORDER BY digest");
    return result.rows.map((r) => r.digest);
  }

  async storedAtMs(digest: string): Promise<number | undefined> {
    parseDigest(digest);
    await this.tables();
    const result = await this.pool.query<{ created_at_ms: string }>(
      "SELECT created_at_ms FROM snapshot_blobs WHERE digest = $1",
      [digest],
    );
    const row = result.rows[0];
    return row ? Number(row.created_at_ms) : undefined;
  }

  async stats(): Promise<{ blobs: number; bytes: number }> {
    await this.tables();
    const result = await this.pool.query<{ blobs: string; bytes: string }>(
      "SELECT COUNT(*) AS blobs, COALESCE(SUM(size), 0) AS bytes FROM snapshot_blobs",
    );
    const row = result.rows[0];
    return { blobs: Number(row?.blobs ?? 0), bytes: Number(row?.bytes ?? 0) };
  }

  private async tables(): Promise<void> {
    if (this.ready !== undefined) await this.ready;
  }

  private async migrateBarePool(pool: pg.Pool): Promise<void> {
    const client = await pool.connect();
    try {
      await migrate(client, undefined);
    } finally {
      client.release();
    }
  }

  private async transaction(fn: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    await this.tables();
    await inTransaction(this.pool, fn);
  }
}

/**
 * The blob's bytes reassembled from its chunks in one statement (one consistent snapshot): undefined
 * when no blob row exists, a reason string when the chunks do not add up to the recorded blob.
 */
async function readBlob(q: Pick<pg.ClientBase, "query">, digest: string): Promise<Uint8Array | string | undefined> {
  const result = await q.query<ChunkDbRow>(
    `SELECT b.size, b.chunks, c.idx, c.data FROM snapshot_blobs b
     LEFT JOIN snapshot_chunks c ON c.digest = b.digest WHERE b.digest = $1 ORDER BY c.idx`,
    [digest],
  );
  const first = result.rows[0];
  if (first === undefined) return undefined;
  const size = Number(first.size);
  const parts: Buffer[] = [];
  for (const row of result.rows) {
    if (row.idx === null || row.data === null) break;
    if (row.idx !== parts.length) return `chunk ${parts.length} of ${first.chunks} is missing`;
    parts.push(row.data);
  }
  if (parts.length !== first.chunks) return `it has ${parts.length} chunks, the blob records ${first.chunks}`;
  const bytes = Buffer.concat(parts);
  if (bytes.length !== size) return `its chunks hold ${bytes.length} bytes, the blob records ${size}`;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function intact(blob: Uint8Array | string, hex: string): boolean {
  return typeof blob !== "string" && sha256(blob) === hex;
}
