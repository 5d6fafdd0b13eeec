// Snapshots a node reads from, or writes to, a file its host names (RestoreActorWhole and SnapshotActor
// with `file`, docs/protocol.md §8.9 and §8.11). Invariants: the bytes read are exactly the file's,
// read only from an absolute path to a regular file whose size is the trailer's; anything else is
// refused before a byte is read — a missing or resized file is DATA_LOSS naming the trailer's digest, a
// relative path INVALID_ARGUMENT — so the caller's digest check (install) always runs on a whole file of
// the announced size. A written file is new (never an existing one overwritten), fsynced before its
// digest is returned, and removed if anything failed; the digest is of exactly the bytes written.
import { createHash } from "node:crypto";
import { close, closeSync, constants, fstatSync, fsync, openSync, read, readSync, write } from "node:fs";
import { rm } from "node:fs/promises";
import { promisify } from "node:util";
import { isAbsolute } from "node:path";
import type { SnapshotTrailer } from "../gen/harnesshost/v1/actors_pb.js";
import { ErrorCode, HostError, invalidArgument } from "../errors/index.js";
// Files up to the store's bound are read synchronously, as the store reads its small blobs; larger ones asynchronously.
import { SYNC_READ_MAX_BYTES } from "../snapshot/store.js";

const readAsync = promisify(read);

function isNotFound(err: unknown): boolean {
  return err instanceof Error && "code" in err && err.code === "ENOENT";
}

function refusedSize(path: string, size: number, trailer: SnapshotTrailer): HostError {
  return new HostError(
    ErrorCode.DataLoss,
    `snapshot file ${path} holds ${size} bytes, trailer says ${trailer.size} bytes sha256:${trailer.sha256}`,
  );
}

function unreadable(path: string, trailer: SnapshotTrailer, err: unknown): HostError {
  if (isNotFound(err))
    return new HostError(ErrorCode.DataLoss, `snapshot file ${path} (sha256:${trailer.sha256}) is missing`, {
      cause: err,
    });
  const reason = err instanceof Error ? err.message : String(err);
  return new HostError(ErrorCode.FailedPrecondition, `cannot read snapshot file ${path}: ${reason}`, { cause: err });
}

/** The bytes of the snapshot file at `path`, which must hold exactly `trailer.size` bytes. */
export async function readSnapshotFile(path: string, trailer: SnapshotTrailer): Promise<Uint8Array> {
  if (!isAbsolute(path)) throw invalidArgument(`snapshot file must be an absolute path, got ${JSON.stringify(path)}`);
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO at the path must not hang the node (for a regular file it changes nothing).
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw unreadable(path, trailer, err);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw invalidArgument(`snapshot file ${path} is not a regular file`);
    const size = info.size;
    if (BigInt(size) !== trailer.size) throw refusedSize(path, size, trailer);
    const bytes = new Uint8Array(size);
    let offset = 0;
    while (offset < size) {
      const n =
        size <= SYNC_READ_MAX_BYTES
          ? readSync(fd, bytes, offset, size - offset, offset)
          : (await readAsync(fd, bytes, offset, size - offset, offset)).bytesRead;
      if (n === 0) throw refusedSize(path, offset, trailer); // it shrank while read
      offset += n;
    }
    return bytes;
  } catch (err) {
    if (err instanceof HostError) throw err;
    throw unreadable(path, trailer, err);
  } finally {
    closeSync(fd);
  }
}

/** The piece of a snapshot written per call while the next piece is hashed (hash and write overlap). */
const WRITE_PIECE_BYTES = 8 * 1024 * 1024;

const writeAsync = promisify(write);
const fsyncAsync = promisify(fsync);
const closeAsync = promisify(close);

/**
 * Writes `bytes` to a new file at `path` (refused if it exists) and fsyncs it once; resolves to the hex
 * sha256 of the bytes, computed while they are written. On any failure the file is removed.
 */
export async function writeSnapshotFile(path: string, bytes: Uint8Array): Promise<string> {
  if (!isAbsolute(path)) throw invalidArgument(`snapshot file must be an absolute path, got ${JSON.stringify(path)}`);
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new HostError(ErrorCode.FailedPrecondition, `cannot create snapshot file ${path}: ${reason}`, { cause: err });
  }
  const hash = createHash("sha256");
  try {
    let offset = 0;
    while (offset < bytes.length) {
      const end = Math.min(offset + WRITE_PIECE_BYTES, bytes.length);
      const piece = bytes.subarray(offset, end);
      const written = writeAll(fd, piece, offset);
      hash.update(piece); // on this thread while the thread pool writes the piece
      await written;
      offset = end;
    }
    await fsyncAsync(fd);
  } catch (err) {
    await closeAsync(fd).catch(() => undefined);
    await rm(path, { force: true });
    const reason = err instanceof Error ? err.message : String(err);
    throw new HostError(ErrorCode.Unavailable, `cannot write snapshot file ${path}: ${reason}`, { cause: err });
  }
  await closeAsync(fd);
  return hash.digest("hex");
}

async function writeAll(fd: number, piece: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < piece.length) {
    const { bytesWritten } = await writeAsync(fd, piece, done, piece.length - done, position + done);
    done += bytesWritten;
  }
}
