// The one PostgreSQL transaction wrapper (the journal and the snapshot store both use it). Invariants:
// `fn` runs on one pooled connection between BEGIN (or the given opening statement) and COMMIT; any
// failure rolls back and is rethrown, and a connection whose ROLLBACK failed is destroyed, never
// returned to the pool; a connection error while it is checked out cannot crash the process.
import type pg from "pg";

export async function inTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
  begin = "BEGIN",
): Promise<T> {
  const client = await pool.connect();
  const onError = (): void => undefined;
  client.on("error", onError);
  let broken: Error | undefined;
  try {
    await client.query(begin);
    const out = await fn(client);
    await client.query("COMMIT");
    return out;
  } catch (err) {
    await client.query("ROLLBACK").catch((rollbackErr: unknown) => {
      broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
    });
    throw err;
  } finally {
    client.removeListener("error", onError);
    client.release(broken);
  }
}
