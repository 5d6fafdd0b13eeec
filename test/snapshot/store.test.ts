// Content-addressed snapshot blobs (docs/protocol.md §9.4): verified reads, idempotent atomic puts, DataLoss on
// corrupt, truncated or missing blobs, and garbage collection of unreferenced blobs.
import { mkdtemp, readdir, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import { collectGarbage, FsSnapshotStore, MemorySnapshotStore, type SnapshotStore } from "../../src/snapshot/index.js";
import { clockPast } from "./clock.js";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const digestOf = (bytes: Uint8Array): string => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

async function hostError(promise: Promise<unknown>): Promise<HostError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(HostError);
    return err as HostError;
  }
  throw new Error("expected a HostError");
}

let dir = "";
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "hh-snapstore-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const stores: Array<[string, () => SnapshotStore]> = [
  ["FsSnapshotStore", () => new FsSnapshotStore(dir)],
  ["MemorySnapshotStore", () => new MemorySnapshotStore()],
];

describe.each(stores)("%s", (_name, make) => {
  it("puts, gets, lists, counts and deletes blobs", async () => {
    const store = make();
    const a = enc("alpha");
    const b = enc("beta beta");
    const da = await store.put(a);
    const db = await store.put(b);
    expect(da).toBe(digestOf(a));
    expect(await store.get(da)).toEqual(a);
    expect(await store.has(db)).toBe(true);
    expect(await store.list()).toEqual([da, db].sort());
    expect(await store.stats()).toEqual({ blobs: 2, bytes: a.length + b.length });
    await store.delete(da);
    expect(await store.has(da)).toBe(false);
    expect(await store.list()).toEqual([db]);
    await store.delete(da); // absent: not an error
  });

  it("stores the same bytes once", async () => {
    const store = make();
    const first = await store.put(enc("same"));
    const second = await store.put(enc("same"));
    expect(second).toBe(first);
    expect(await store.stats()).toEqual({ blobs: 1, bytes: 4 });
  });

  it("refuses a missing blob with DataLoss and invalid digests with InvalidArgument", async () => {
    const store = make();
    const missing = digestOf(enc("never stored"));
    const err = await hostError(store.get(missing));
    expect(err.code).toBe(ErrorCode.DataLoss);
    expect(err.message).toBe(`snapshot blob ${missing} is missing`);
    for (const bad of [
      "",
      "sha256:abc",
      `md5:${"0".repeat(32)}`,
      `sha256:${"A".repeat(64)}`,
      `sha256:../${"0".repeat(61)}`,
    ]) {
      expect((await hostError(store.get(bad))).code).toBe(ErrorCode.InvalidArgument);
    }
  });

  it("collects only unreferenced blobs", async () => {
    const store = make();
    const keep = await store.put(enc("keep"));
    const drop1 = await store.put(enc("drop 1"));
    const drop2 = await store.put(enc("drop 2"));
    expect((await collectGarbage(store, [keep])).deleted).toEqual([]); // inside the default grace period
    const { deleted } = await collectGarbage(store, [keep], { graceMs: 0 });
    expect(deleted.sort()).toEqual([drop1, drop2].sort());
    expect(await store.list()).toEqual([keep]);
    expect(await store.get(keep)).toEqual(enc("keep"));
  });

  it("reports when a blob was stored, and nothing for an absent one", async () => {
    const store = make();
    const before = Date.now();
    const d = await store.put(enc("when"));
    const after = Date.now();
    const at = await store.storedAtMs(d);
    if (at === undefined) throw new Error("storedAtMs is undefined for a stored blob");
    // A file's mtime comes from the kernel's coarse clock, which may lag Date.now() by a tick, and
    // carries sub-millisecond digits: hence the slack below and the floor above.
    expect(at).toBeGreaterThanOrEqual(before - 1000);
    expect(Math.floor(at)).toBeLessThanOrEqual(after);
    // The time is the storing time, not the reading time: once the clock has moved on, a later read
    // reports the same instant.
    await clockPast(Math.ceil(at));
    expect(await store.storedAtMs(d)).toBe(at);
    await store.delete(d);
    expect(await store.storedAtMs(d)).toBeUndefined();
  });
});

describe("FsSnapshotStore on disk", () => {
  const blobPath = (digest: string): string => {
    const hex = digest.slice("sha256:".length);
    return join(dir, "sha256", hex.slice(0, 2), hex);
  };

  it("lays blobs out as sha256/<2 hex>/<hex> and leaves no temp files", async () => {
    const store = new FsSnapshotStore(dir);
    const digest = await store.put(enc("layout"));
    expect(await readFile(blobPath(digest), "utf8")).toBe("layout");
    const hex = digest.slice("sha256:".length);
    expect(await readdir(join(dir, "sha256", hex.slice(0, 2)))).toEqual([hex]);
  });

  it("refuses a blob with a flipped byte, naming the digest", async () => {
    const store = new FsSnapshotStore(dir);
    const digest = await store.put(enc("important state"));
    const onDisk = await readFile(blobPath(digest));
    onDisk[3] = (onDisk[3] ?? 0) ^ 0xff;
    await writeFile(blobPath(digest), onDisk);
    const err = await hostError(store.get(digest));
    expect(err.code).toBe(ErrorCode.DataLoss);
    expect(err.message).toContain(`snapshot blob ${digest} is corrupt`);
  });

  it("refuses a truncated blob", async () => {
    const store = new FsSnapshotStore(dir);
    const digest = await store.put(enc("a longer piece of state"));
    await truncate(blobPath(digest), 5);
    const err = await hostError(store.get(digest));
    expect(err.code).toBe(ErrorCode.DataLoss);
    expect(err.message).toContain(`snapshot blob ${digest} is corrupt`);
  });

  it("repairs a corrupt copy when the same bytes are put again", async () => {
    const store = new FsSnapshotStore(dir);
    const bytes = enc("heal me");
    const digest = await store.put(bytes);
    await truncate(blobPath(digest), 2);
    expect(await store.put(bytes)).toBe(digest);
    expect(await store.get(digest)).toEqual(bytes);
  });

  it("ignores stray files when listing", async () => {
    const store = new FsSnapshotStore(dir);
    const digest = await store.put(enc("real"));
    const hex = digest.slice("sha256:".length);
    await writeFile(join(dir, "sha256", hex.slice(0, 2), `.${hex}.1.tmp`), "partial");
    expect(await store.list()).toEqual([digest]);
  });

  it("lists nothing for a fresh directory", async () => {
    const store = new FsSnapshotStore(join(dir, "not-yet"));
    expect(await store.list()).toEqual([]);
    expect(await store.stats()).toEqual({ blobs: 0, bytes: 0 });
  });
});
