// Content-addressed snapshot blobs (docs/protocol.md §9.4): a blob's name is the sha256 of its bytes.
// Invariant: `get` returns bytes only after re-hashing them to the requested digest; a corrupt or
// missing blob is refused with DataLoss, and `put` (or a staged file's commit) makes a blob visible only
// once it is fully on disk. A staged file is named by its writer's digest, which every reader checks.
import { createHash, randomBytes } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, stat, unlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { ErrorCode, HostError } from "../errors/index.js";

/** What a caller already knows about the bytes it stores. */
export interface PutOptions {
  /**
   * The hex sha256 of exactly these bytes, computed by the caller in this process (e.g. while the
   * bytes streamed in): the store then does not hash them again — for a 100 MB snapshot that hash is
   * ~100 ms. A wrong value stores a blob `get` will refuse as corrupt, so pass only a digest you computed.
   */
  readonly sha256?: string;
}

export interface SnapshotStore {
  /** Stores the bytes and returns their digest, `sha256:<hex>`. Storing the same bytes twice keeps one blob. */
  put(bytes: Uint8Array, opts?: PutOptions): Promise<string>;
  /** The verified bytes; DataLoss when the blob is missing or does not hash to `digest`. */
  get(digest: string): Promise<Uint8Array>;
  has(digest: string): Promise<boolean>;
  /** Removes the blob; deleting an absent blob is not an error. */
  delete(digest: string): Promise<void>;
  /** Every stored digest, sorted. */
  list(): Promise<string[]>;
  stats(): Promise<{ blobs: number; bytes: number }>;
  /** When the blob was stored (ms since the epoch), or undefined when it is absent. */
  storedAtMs(digest: string): Promise<number | undefined>;
  /**
   * The blob as a whole file on this machine, for a reader beside the host that checks the bytes
   * against `digest` itself before using them (a spawned node's restore, docs/protocol.md §8.9): its
   * absolute path and size, NOT verified here. Absent (or undefined) for stores without local files;
   * DataLoss when the blob is missing.
   */
  localFile?(digest: string): LocalBlobFile | undefined;
  /**
   * A new, empty place for a writer beside the host to put a blob as a file (a spawned node's snapshot,
   * docs/protocol.md §8.11): the writer creates `path`, writes and fsyncs it, then `commit` names it by
   * the digest the writer computed and makes the name durable. Absent for stores without local files.
   */
  stageFile?(): Promise<StagedBlobFile>;
  /**
   * Removes the store's own unfinished files last modified before `beforeMs` (ms since the epoch) —
   * temp files of puts and staged files of writers that never committed (a crash, an abandoned
   * snapshot) — and returns their paths. Never touches a blob. Absent for stores without such files.
   */
  removeStrays?(beforeMs: number): Promise<string[]>;
}

/** A blob file being written beside the host (SnapshotStore.stageFile). */
export interface StagedBlobFile {
  /** Absolute path the writer creates (it does not exist yet). */
  readonly path: string;
  /**
   * Stores the written, fsynced file as blob `sha256:<sha256>` and returns that digest: DataLoss when
   * the file does not hold `size` bytes. The digest is the writer's, NOT re-hashed here (a wrong one is
   * refused by every reader, which checks a blob against its name). Keeps an intact blob already stored
   * under that digest and drops the file.
   */
  commit(sha256: string, size: number): Promise<string>;
  /** Removes whatever was written (after a failure); safe to call after commit. */
  discard(): Promise<void>;
}

/** Where a stored blob lies (SnapshotStore.localFile). */
export interface LocalBlobFile {
  readonly path: string;
  readonly size: number;
}

const DIGEST = /^sha256:([0-9a-f]{64})$/;
const HEX_NAME = /^[0-9a-f]{64}$/;

/** The hex part of a `sha256:<hex>` digest; InvalidArgument for anything else. */
export function parseDigest(digest: string): string {
  const hex = DIGEST.exec(digest)?.[1];
  if (hex === undefined)
    throw new HostError(ErrorCode.InvalidArgument, `invalid snapshot digest ${JSON.stringify(digest)}`);
  return hex;
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The caller's digest of the bytes when it gave a well-formed one, else the bytes' own. */
export function knownOrHashed(bytes: Uint8Array, opts: PutOptions | undefined): string {
  const known = opts?.sha256;
  return known !== undefined && HEX_NAME.test(known) ? known : sha256(bytes);
}

function verified(digest: string, hex: string, bytes: Uint8Array): Uint8Array {
  const actual = sha256(bytes);
  if (actual !== hex) {
    throw new HostError(
      ErrorCode.DataLoss,
      `snapshot blob ${digest} is corrupt: its ${bytes.length} bytes hash to sha256:${actual}`,
    );
  }
  return bytes;
}

function isNotFound(err: unknown): boolean {
  return err instanceof Error && "code" in err && err.code === "ENOENT";
}

/**
 * Blobs up to this size are read with synchronous calls (open, fstat, read, close: microseconds from
 * the page cache) instead of four thread-pool round trips; larger ones never block the event loop.
 * 2 MiB covers a 1 MB actor state (~1.2 MB blob, docs/performance.md "Memory tier at size"): reading it
 * from the page cache blocks ~0.2 ms, less than the sha256 that follows every read (~0.8 ms), while the
 * asynchronous read cost a thread-pool hop per step, each a scheduler wait on a loaded host.
 */
export const SYNC_READ_MAX_BYTES = 2 * 1024 * 1024;

/** The file's bytes when it holds at most SYNC_READ_MAX_BYTES, else undefined (read it asynchronously). */
function readSmallFile(path: string): Uint8Array | undefined {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    if (size > SYNC_READ_MAX_BYTES) return undefined;
    const bytes = new Uint8Array(size);
    let offset = 0;
    while (offset < size) {
      const n = readSync(fd, bytes, offset, size - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    return offset === size ? bytes : bytes.subarray(0, offset);
  } finally {
    closeSync(fd);
  }
}

/** The whole file, small files synchronously (see SYNC_READ_MAX_BYTES). */
async function readBlobFile(path: string): Promise<Uint8Array> {
  const small = readSmallFile(path);
  if (small !== undefined) return small;
  const file = await readFile(path);
  return new Uint8Array(file.buffer, file.byteOffset, file.byteLength); // plain view, no copy
}

/** Where FsSnapshotStore.stageFile puts files being written (under its root; never listed as blobs). */
const STAGING_DIR = ".staging";

/** Blobs as files `<dir>/sha256/<first 2 hex>/<hex>`, written to a temp file, fsynced, then renamed. */
export class FsSnapshotStore implements SnapshotStore {
  private readonly root: string;

  constructor(dir: string) {
    this.root = resolve(dir, "sha256");
  }

  /** The prefix directory that holds blob `hex` (and the temp files of its puts). */
  private dirOf(hex: string): string {
    return join(this.root, hex.slice(0, 2));
  }

  private pathOf(hex: string): string {
    return join(this.dirOf(hex), hex);
  }

  async put(bytes: Uint8Array, opts?: PutOptions): Promise<string> {
    const hex = knownOrHashed(bytes, opts);
    const digest = `sha256:${hex}`;
    const target = this.pathOf(hex);
    if (await this.holdsIntact(target, hex)) return digest;
    const dir = this.dirOf(hex);
    await mkdir(dir, { recursive: true });
    const temp = join(dir, `.${hex}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
    try {
      const file = await open(temp, "wx");
      try {
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    await syncDir(dir);
    return digest;
  }

  async stageFile(): Promise<StagedBlobFile> {
    const staging = join(this.root, STAGING_DIR);
    await mkdir(staging, { recursive: true });
    const path = join(staging, `${process.pid}.${randomBytes(8).toString("hex")}.tmp`);
    let done = false;
    return {
      path,
      commit: async (sha256: string, size: number): Promise<string> => {
        if (done) throw new HostError(ErrorCode.FailedPrecondition, `staged blob ${path} was already committed`);
        if (!HEX_NAME.test(sha256))
          throw new HostError(ErrorCode.DataLoss, `staged blob ${path}: invalid sha256 ${JSON.stringify(sha256)}`);
        const written = (await stat(path)).size;
        if (written !== size)
          throw new HostError(
            ErrorCode.DataLoss,
            `staged blob ${path} holds ${written} bytes, its writer said ${size}`,
          );
        const digest = `sha256:${sha256}`;
        const target = this.pathOf(sha256);
        if (await this.holdsIntact(target, sha256)) {
          await rm(path, { force: true });
        } else {
          const dir = this.dirOf(sha256);
          await mkdir(dir, { recursive: true });
          await rename(path, target);
          await syncDir(dir);
        }
        done = true;
        return digest;
      },
      discard: async (): Promise<void> => {
        if (!done) await rm(path, { force: true });
      },
    };
  }

  /** True when the blob exists and is intact; a damaged copy is overwritten by the caller. */
  private async holdsIntact(path: string, hex: string): Promise<boolean> {
    try {
      return sha256(await readBlobFile(path)) === hex;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async get(digest: string): Promise<Uint8Array> {
    const hex = parseDigest(digest);
    let bytes: Uint8Array;
    try {
      bytes = await readBlobFile(this.pathOf(hex));
    } catch (err) {
      if (isNotFound(err)) throw new HostError(ErrorCode.DataLoss, `snapshot blob ${digest} is missing`);
      throw err;
    }
    return verified(digest, hex, bytes);
  }

  localFile(digest: string): LocalBlobFile {
    const path = this.pathOf(parseDigest(digest));
    try {
      return { path, size: statSync(path).size };
    } catch (err) {
      if (isNotFound(err)) throw new HostError(ErrorCode.DataLoss, `snapshot blob ${digest} is missing`);
      throw err;
    }
  }

  async has(digest: string): Promise<boolean> {
    try {
      return (await stat(this.pathOf(parseDigest(digest)))).isFile();
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async delete(digest: string): Promise<void> {
    try {
      await unlink(this.pathOf(parseDigest(digest)));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async list(): Promise<string[]> {
    return (await this.entries()).map((e) => `sha256:${e.hex}`);
  }

  async stats(): Promise<{ blobs: number; bytes: number }> {
    const entries = await this.entries();
    return { blobs: entries.length, bytes: entries.reduce((sum, e) => sum + e.size, 0) };
  }

  async storedAtMs(digest: string): Promise<number | undefined> {
    try {
      return (await stat(this.pathOf(parseDigest(digest)))).mtimeMs;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async removeStrays(beforeMs: number): Promise<string[]> {
    const removed: string[] = [];
    const sweep = async (dir: string, isStray: (name: string) => boolean): Promise<void> => {
      for (const name of await namesIn(dir)) {
        if (!isStray(name)) continue;
        const path = join(dir, name);
        try {
          const info = await stat(path);
          if (!info.isFile() || info.mtimeMs >= beforeMs) continue;
          await unlink(path);
          removed.push(path);
        } catch (err) {
          if (!isNotFound(err)) throw err; // committed or removed meanwhile
        }
      }
    };
    await sweep(join(this.root, STAGING_DIR), (name) => name.endsWith(".tmp"));
    for (const prefix of await namesIn(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(prefix)) continue;
      await sweep(join(this.root, prefix), (name) => name.startsWith(".") && name.endsWith(".tmp"));
    }
    return removed;
  }

  private async entries(): Promise<{ hex: string; size: number }[]> {
    const out: { hex: string; size: number }[] = [];
    for (const prefix of (await namesIn(this.root)).sort()) {
      for (const name of (await namesIn(join(this.root, prefix))).sort()) {
        if (!HEX_NAME.test(name) || !name.startsWith(prefix)) continue; // temp files, strays
        try {
          const info = await stat(join(this.root, prefix, name));
          if (info.isFile()) out.push({ hex: name, size: info.size });
        } catch (err) {
          if (!isNotFound(err)) throw err; // deleted while listing
        }
      }
    }
    return out;
  }
}

/** The names in `dir`, or none when it does not exist (not yet created, or removed while listing). */
async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}

/** Makes a rename durable: fsync the directory that holds the new name (best effort where unsupported). */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } catch (err) {
    if (!(err instanceof Error && "code" in err && (err.code === "EINVAL" || err.code === "EPERM"))) throw err;
  } finally {
    await handle.close();
  }
}

/** In-memory store for tests; it copies bytes in and out, so callers cannot alter what it holds. */
export class MemorySnapshotStore implements SnapshotStore {
  private readonly blobs = new Map<string, Uint8Array>();
  private readonly stored = new Map<string, number>();

  async put(bytes: Uint8Array, opts?: PutOptions): Promise<string> {
    const digest = `sha256:${knownOrHashed(bytes, opts)}`;
    if (!this.blobs.has(digest)) {
      this.blobs.set(digest, Uint8Array.from(bytes));
      this.stored.set(digest, Date.now());
    }
    return digest;
  }

  async storedAtMs(digest: string): Promise<number | undefined> {
    parseDigest(digest);
    return this.stored.get(digest);
  }

  async get(digest: string): Promise<Uint8Array> {
    const hex = parseDigest(digest);
    const bytes = this.blobs.get(digest);
    if (bytes === undefined) throw new HostError(ErrorCode.DataLoss, `snapshot blob ${digest} is missing`);
    return verified(digest, hex, Uint8Array.from(bytes));
  }

  async has(digest: string): Promise<boolean> {
    parseDigest(digest);
    return this.blobs.has(digest);
  }

  async delete(digest: string): Promise<void> {
    parseDigest(digest);
    this.blobs.delete(digest);
    this.stored.delete(digest);
  }

  async list(): Promise<string[]> {
    return [...this.blobs.keys()].sort();
  }

  async stats(): Promise<{ blobs: number; bytes: number }> {
    let bytes = 0;
    for (const blob of this.blobs.values()) bytes += blob.length;
    return { blobs: this.blobs.size, bytes };
  }
}

/**
 * Deletes every blob not in `referenced` (docs/protocol.md §9.7: latest checkpoints, SUSPEND records, fork children).
 * The caller must include digests of puts still in flight: a blob put after the listing survives,
 * but one put before it and not yet referenced would be collected.
 */
export interface GarbageOptions {
  /**
   * Blobs stored less than this long ago (ms) are kept even when unreferenced: a checkpoint row is
   * written just after its blob, and another host may be between the two. Default 10 minutes.
   */
  readonly graceMs?: number;
  readonly nowMs?: number;
}

export async function collectGarbage(
  store: SnapshotStore,
  referenced: Iterable<string>,
  opts: GarbageOptions = {},
): Promise<{ deleted: string[]; strays: string[] }> {
  const graceMs = opts.graceMs ?? 10 * 60_000;
  const now = opts.nowMs ?? Date.now();
  const keep = new Set<string>();
  for (const digest of referenced) {
    parseDigest(digest);
    keep.add(digest);
  }
  const deleted: string[] = [];
  for (const digest of await store.list()) {
    if (keep.has(digest)) continue;
    const storedAt = await store.storedAtMs(digest);
    if (storedAt === undefined || now - storedAt < graceMs) continue;
    await store.delete(digest);
    deleted.push(digest);
  }
  // Unfinished files older than the grace period belong to no writer still running (a put or a staged
  // snapshot finishes within snapshotMs, far shorter): without this a crash or an abandoned snapshot
  // would leave its bytes on disk for good.
  const strays = (await store.removeStrays?.(now - graceMs)) ?? [];
  return { deleted, strays };
}
