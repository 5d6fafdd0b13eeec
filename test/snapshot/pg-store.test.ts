// The PostgreSQL snapshot store: multi-chunk blobs round-trip, a digest is stored once, and damage done
// behind its back (a flipped byte, a lost chunk, a lost blob) is refused as DataLoss naming the digest.
import { createHash, randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import { PostgresJournal } from "../../src/journal/postgres/journal.js";
import { PgSnapshotStore } from "../../src/snapshot/pg-store.js";
import { clockPast } from "./clock.js";
import { dropSchemas, freshSchema, PG_URL, rawClient } from "../journal/postgres-fixture.js";

const schemas: string[] = [];
afterAll(async () => {
  await dropSchemas(schemas.splice(0));
});

async function dataLoss(promise: Promise<unknown>): Promise<HostError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HostError);
  expect((err as HostError).code).toBe(ErrorCode.DataLoss);
  return err as HostError;
}

describe("postgres snapshot store", () => {
  let journal: PostgresJournal;
  let store: PgSnapshotStore;
  let raw: pg.Client;
  const MiB = 1 << 20;
  const big = randomBytes(4 * MiB + 12_345);
  const bigDigest = `sha256:${createHash("sha256").update(big).digest("hex")}`;

  beforeEach(async () => {
    const schema = freshSchema();
    schemas.push(schema);
    journal = await PostgresJournal.open(PG_URL, { schema, poolSize: 2 });
    store = new PgSnapshotStore(journal);
    raw = await rawClient(schema);
  });

  afterEach(async () => {
    await raw.end();
    await journal.close();
  });

  async function chunkCount(digest: string): Promise<number> {
    return (await raw.query("SELECT 1 FROM snapshot_chunks WHERE digest = $1", [digest])).rowCount ?? 0;
  }

  it("round-trips a blob larger than 4 MiB through several 1 MiB chunks", async () => {
    const digest = await store.put(big);
    expect(digest).toBe(bigDigest);
    expect(await chunkCount(digest)).toBe(5);
    const back = await store.get(digest);
    expect(Buffer.from(back).equals(big)).toBe(true);
    expect(await store.has(digest)).toBe(true);
  });

  it("reports when a blob was stored, the same on a later read, and nothing once it is deleted", async () => {
    const before = Date.now();
    const d = await store.put(Buffer.from("when"));
    const after = Date.now();
    const at = await store.storedAtMs(d);
    if (at === undefined) throw new Error("storedAtMs is undefined for a stored blob");
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
    await clockPast(at);
    expect(await store.storedAtMs(d)).toBe(at);
    await store.delete(d);
    expect(await store.storedAtMs(d)).toBeUndefined();
  });

  it("stores one copy however many times the same bytes are put", async () => {
    const digests = await Promise.all([store.put(big), store.put(big), store.put(Uint8Array.from(big))]);
    expect(new Set(digests)).toEqual(new Set([bigDigest]));
    expect((await raw.query("SELECT 1 FROM snapshot_blobs")).rowCount).toBe(1);
    expect(await chunkCount(bigDigest)).toBe(5);
    expect(await store.stats()).toEqual({ blobs: 1, bytes: big.length });
  });

  it("refuses a blob with a corrupted chunk as DataLoss naming the digest, and a re-put repairs it", async () => {
    await store.put(big);
    await raw.query(
      "UPDATE snapshot_chunks SET data = set_byte(data, 7, (get_byte(data, 7) + 1) % 256) WHERE digest = $1 AND idx = 2",
      [bigDigest],
    );
    const err = await dataLoss(store.get(bigDigest));
    expect(err.message).toContain(bigDigest);
    expect(err.message).toContain("corrupt");
    expect(await store.put(big)).toBe(bigDigest);
    expect(Buffer.from(await store.get(bigDigest)).equals(big)).toBe(true);
  });

  it("refuses a blob that lost a chunk, and a missing blob, as DataLoss naming the digest", async () => {
    await store.put(big);
    await raw.query("DELETE FROM snapshot_chunks WHERE digest = $1 AND idx = 3", [bigDigest]);
    expect((await dataLoss(store.get(bigDigest))).message).toContain(bigDigest);
    const absent = `sha256:${"0".repeat(64)}`;
    const err = await dataLoss(store.get(absent));
    expect(err.message).toBe(`snapshot blob ${absent} is missing`);
    expect(await store.has(absent)).toBe(false);
  });

  it("deletes, lists sorted and counts; an invalid digest is InvalidArgument", async () => {
    const small = [Buffer.from("alpha"), Buffer.from("bravo"), new Uint8Array(0)];
    const digests = await Promise.all(small.map((b) => store.put(b)));
    expect(await store.list()).toEqual([...digests].sort());
    expect(await store.stats()).toEqual({ blobs: 3, bytes: 10 });
    expect((await store.get(digests[2] ?? "")).length).toBe(0);
    await store.delete(digests[0] ?? "");
    await store.delete(digests[0] ?? "");
    expect(await store.has(digests[0] ?? "")).toBe(false);
    expect(await store.list()).toEqual([digests[1], digests[2]].sort());
    expect(await store.stats()).toEqual({ blobs: 2, bytes: 5 });
    expect((await raw.query("SELECT 1 FROM snapshot_chunks WHERE digest = $1", [digests[0]])).rowCount).toBe(0);
    await expect(store.get("md5:abc")).rejects.toMatchObject({ code: ErrorCode.InvalidArgument });
  });

  it("works on a bare pool, creating its tables first", async () => {
    const schema = freshSchema();
    schemas.push(schema);
    const pool = new pg.Pool({ connectionString: PG_URL, max: 2, options: `-c search_path=${schema}` });
    const setup = new pg.Client({ connectionString: PG_URL });
    await setup.connect();
    await setup.query(`CREATE SCHEMA "${schema}"`);
    await setup.end();
    try {
      const bare = new PgSnapshotStore(pool, { chunkBytes: 4 });
      const digest = await bare.put(Buffer.from("0123456789"));
      expect(new TextDecoder().decode(await bare.get(digest))).toBe("0123456789");
      const counted = await pool.query("SELECT COUNT(*)::int AS n FROM snapshot_chunks");
      expect(counted.rows[0]).toEqual({ n: 3 });
    } finally {
      await pool.end();
    }
  });
});
