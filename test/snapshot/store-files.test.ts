// FsSnapshotStore's blobs as local files (docs/protocol.md §8.9, §8.11): localFile names a stored blob's
// file for a reader that checks it itself; stageFile lets a writer beside the host store a blob it wrote
// and fsynced, named by the writer's digest, visible only once committed.
import { createHash } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { FsSnapshotStore } from "../../src/snapshot/index.js";

const hex = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");
const bytesOf = (s: string): Uint8Array => new TextEncoder().encode(s);

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a failure");
}

let dir = "";
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "hh-storefiles-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("FsSnapshotStore local files", () => {
  it("localFile names a stored blob's absolute path and size; a missing blob is DATA_LOSS", async () => {
    const store = new FsSnapshotStore(join(dir, "rel", ".."));
    const bytes = bytesOf("state");
    const digest = await store.put(bytes);
    const file = store.localFile(digest);
    expect(isAbsolute(file.path)).toBe(true);
    expect(file.size).toBe(bytes.length);
    await store.delete(digest);
    let err: unknown;
    try {
      store.localFile(digest);
    } catch (e) {
      err = e;
    }
    expect(isHostError(err, ErrorCode.DataLoss)).toBe(true);
  });

  it("aStagedFileBecomesABlobOnlyWhenCommittedUnderItsWritersDigest: listed and readable after commit, never before", async () => {
    const store = new FsSnapshotStore(dir);
    const bytes = bytesOf("written beside the host");
    const staged = await store.stageFile();
    expect(existsSync(staged.path)).toBe(false);
    writeFileSync(staged.path, bytes);
    expect(await store.list()).toEqual([]);
    const digest = await staged.commit(hex(bytes), bytes.length);
    expect(digest).toBe(`sha256:${hex(bytes)}`);
    expect(await store.list()).toEqual([digest]);
    expect(Buffer.from(await store.get(digest)).toString()).toBe("written beside the host");
    expect(existsSync(staged.path)).toBe(false);
    await staged.discard(); // after commit: leaves the blob alone
    expect(await store.has(digest)).toBe(true);
  });

  it("aStagedFileOfTheWrongSizeIsRefused: DATA_LOSS, nothing stored, and discard removes it", async () => {
    const store = new FsSnapshotStore(dir);
    const bytes = bytesOf("abc");
    const staged = await store.stageFile();
    writeFileSync(staged.path, bytes);
    expect(isHostError(await failure(staged.commit(hex(bytes), bytes.length + 1)), ErrorCode.DataLoss)).toBe(true);
    expect(isHostError(await failure(staged.commit("not-hex", bytes.length)), ErrorCode.DataLoss)).toBe(true);
    expect(await store.list()).toEqual([]);
    await staged.discard();
    expect(existsSync(staged.path)).toBe(false);
  });

  it("a staged copy of a stored blob keeps the one blob and drops the copy", async () => {
    const store = new FsSnapshotStore(dir);
    const bytes = bytesOf("same");
    const digest = await store.put(bytes);
    const staged = await store.stageFile();
    writeFileSync(staged.path, bytes);
    expect(await staged.commit(hex(bytes), bytes.length)).toBe(digest);
    expect(await store.stats()).toEqual({ blobs: 1, bytes: bytes.length });
    expect(await readdir(join(dir, "sha256", ".staging"))).toEqual([]);
  });
});
