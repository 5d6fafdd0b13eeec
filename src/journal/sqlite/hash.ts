// How the SQLite journal stores a record's prev_hash and content_hash (schema version 4). Invariant: a
// stored hash reads back exactly as it was written — a canonical hash (64 lowercase hex digits, what
// the chain mints) is stored as its 32 bytes (a BLOB), any other string (the genesis "", a value an
// older build or an importer wrote, a tampered value) as that string, and a BLOB of any length reads
// as its lowercase hex — so verify sees the same strings whatever form a row was written in.

const CANONICAL = /^[0-9a-f]{64}$/;

/** The column value for `hash`: its 32 bytes when canonical, else the string itself. */
export function hashColumn(hash: string): string | Buffer {
  return CANONICAL.test(hash) ? Buffer.from(hash, "hex") : hash;
}

/**
 * The SQL expression reading hash column `column` back as text: a BLOB as lowercase hex, TEXT as it is.
 * Done in SQL, so a read allocates one string per hash and no Buffer.
 */
export function hashText(column: string): string {
  return `CASE WHEN typeof(${column}) = 'blob' THEN lower(hex(${column})) ELSE ${column} END`;
}
