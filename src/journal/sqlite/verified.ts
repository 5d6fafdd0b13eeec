// The SQLite journal's verified positions (docs/protocol.md §5.9; table verified_positions, schema
// version 5). Invariants: a session has at most one row and it only moves forward (a write at or below
// the stored seq changes nothing); a read-only open of an older file, which has no such table, reads
// no position (the host then walks the whole chain) instead of failing.
import type BetterSqlite3 from "better-sqlite3";
import type { VerifiedPosition } from "../types.js";

interface PositionDbRow {
  session: string;
  seq: number;
  hash: string;
  projection: Uint8Array;
  digest: string;
  created_at_ms: number;
}

function missingTable(err: unknown): boolean {
  return err instanceof Error && /no such table: verified_positions/.test(err.message);
}

export class SqliteVerifiedPositions {
  private put: BetterSqlite3.Statement<[string, number, string, Uint8Array, string, number]> | undefined;
  private get: BetterSqlite3.Statement<[string], PositionDbRow> | undefined;
  private del: BetterSqlite3.Statement<[string]> | undefined;
  /** The table is absent (a read-only open of a file older than version 5). */
  private absent = false;

  constructor(private readonly db: BetterSqlite3.Database) {}

  /** Upserts forward only; the caller runs it as a write (after queued appends). */
  store(row: VerifiedPosition): void {
    this.put ??= this.db.prepare(
      `INSERT INTO verified_positions (session, seq, hash, projection, digest, created_at_ms) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(session) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, projection = excluded.projection,
         digest = excluded.digest, created_at_ms = excluded.created_at_ms
       WHERE excluded.seq > verified_positions.seq`,
    );
    this.put.run(row.session, row.seq, row.hash, row.projection, row.digest, row.createdAtMs);
  }

  read(session: string): VerifiedPosition | undefined {
    if (this.absent) return undefined;
    let row: PositionDbRow | undefined;
    try {
      this.get ??= this.db.prepare(
        "SELECT session, seq, hash, projection, digest, created_at_ms FROM verified_positions WHERE session = ?",
      );
      row = this.get.get(session);
    } catch (err) {
      if (!missingTable(err)) throw err;
      this.absent = true;
      return undefined;
    }
    if (!row) return undefined;
    return {
      session: row.session,
      seq: row.seq,
      hash: row.hash,
      // better-sqlite3 returns a Buffer: the same bytes, seen as a plain Uint8Array.
      projection: new Uint8Array(row.projection.buffer, row.projection.byteOffset, row.projection.byteLength),
      digest: row.digest,
      createdAtMs: row.created_at_ms,
    };
  }

  /** Inside the caller's delete-session transaction. */
  remove(session: string): void {
    this.del ??= this.db.prepare("DELETE FROM verified_positions WHERE session = ?");
    this.del.run(session);
  }
}
