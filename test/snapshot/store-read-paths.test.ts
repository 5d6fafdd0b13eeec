// FsSnapshotStore reads small blobs synchronously and larger ones asynchronously
// (SYNC_READ_MAX_BYTES). Invariant: both paths return exactly the stored bytes and refuse a corrupt,
// truncated or missing blob with DATA_LOSS naming the digest; a damaged copy is repaired by a re-put.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import { FsSnapshotStore, SYNC_READ_MAX_BYTES } from "../../src/snapshot/store.js";

let dir = "";
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "hh-snapread-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function blobPath(digest: string): string {
  const hex = digest.slice("sha256:".length);
  return join(dir, "sha256", hex.slice(0, 2), hex);
}

function bytesOf(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

async function dataLoss(p: Promise<unknown>): Promise<HostError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HostError);
  expect((err as HostError).code).toBe(ErrorCode.DataLoss);
  return err as HostError;
}

const sizes: [string, number][] = [
  ["empty", 0],
  ["small (sync read)", 200],
  ["at the sync limit", SYNC_READ_MAX_BYTES],
  ["one byte past it (async read)", SYNC_READ_MAX_BYTES + 1],
  ["large (async read)", 3 * SYNC_READ_MAX_BYTES + 17],
];

describe.each(sizes)("FsSnapshotStore read of a %s blob", (_what, size) => {
  it("returns exactly the stored bytes", async () => {
    const store = new FsSnapshotStore(dir);
    const bytes = bytesOf(size, 7);
    const digest = await store.put(bytes);
    expect(Buffer.from(await store.get(digest)).equals(Buffer.from(bytes))).toBe(true);
  });

  it("refuses a corrupt, truncated or missing copy with DATA_LOSS naming the digest, and a re-put repairs it", async () => {
    const store = new FsSnapshotStore(dir);
    const bytes = bytesOf(size + 1, 3);
    const digest = await store.put(bytes);
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 1] = flipped[flipped.length - 1]! ^ 0xff;
    await writeFile(blobPath(digest), flipped);
    expect((await dataLoss(store.get(digest))).message).toContain(digest);
    await writeFile(blobPath(digest), flipped.subarray(0, Math.floor(flipped.length / 2)));
    expect((await dataLoss(store.get(digest))).message).toContain(digest);
    expect(await store.put(bytes)).toBe(digest);
    expect(Buffer.from(await store.get(digest)).equals(Buffer.from(bytes))).toBe(true);
    await store.delete(digest);
    expect((await dataLoss(store.get(digest))).message).toContain("missing");
  });
});
