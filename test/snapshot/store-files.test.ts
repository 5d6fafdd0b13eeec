// FsSnapshotStore's blobs as local files (docs/protocol.md §8.9, §8.11): localFile names a stored blob's
// file for a reader that checks it itself; stageFile lets a writer beside the host store a blob it wrote
// and fsynced, named by the writer's digest, visible only once committed; unfinished files no writer
// committed are removed by snapshot GC once older than its grace period.
import { createHash } from "node:crypto";
import { existsSync, utimesSync, writeFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { collectGarbage, FsSnapshotStore } from "../../src/snapshot/index.js";
import { rejectsWithCode } from "../tiers/helpers.js";

const hex = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");
const bytesOf = (s: string): Uint8Array => new TextEncoder().encode(s);

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
    await rejectsWithCode(staged.commit(hex(bytes), bytes.length + 1), ErrorCode.DataLoss);
    await rejectsWithCode(staged.commit("not-hex", bytes.length), ErrorCode.DataLoss);
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

describe("unfinished files (snapshot GC, docs/protocol.md §9.7)", () => {
  it("unfinishedFilesOlderThanTheGracePeriodAreRemovedAndNothingElse", async () => {
    const store = new FsSnapshotStore(dir);
    const blob = await store.put(bytesOf("a blob nobody references"));
    // A staged snapshot whose writer went away, and one still being written.
    const abandoned = await store.stageFile();
    writeFileSync(abandoned.path, "half a snapshot");
    const writing = await store.stageFile();
    writeFileSync(writing.path, "a snapshot being written");
    // A put's temp file left by a crash, beside the blobs.
    const prefixDir = join(dir, "sha256", blob.slice("sha256:".length, "sha256:".length + 2));
    const crashed = join(prefixDir, `.${"e".repeat(64)}.12345.abcdef.tmp`);
    writeFileSync(crashed, "partial bytes");
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(abandoned.path, old, old);
    utimesSync(crashed, old, old);

    const { deleted, strays } = await collectGarbage(store, [blob], { graceMs: 60_000 });
    expect(deleted).toEqual([]);
    expect(strays.sort()).toEqual([abandoned.path, crashed].sort());
    expect(existsSync(abandoned.path)).toBe(false);
    expect(existsSync(crashed)).toBe(false);
    // The young staged file and the blob stay; the young writer can still commit.
    expect(existsSync(writing.path)).toBe(true);
    expect(await store.list()).toEqual([blob]);
    const committed = await writing.commit(hex(bytesOf("a snapshot being written")), 24);
    expect(await store.get(committed)).toEqual(bytesOf("a snapshot being written"));
  });
});
