// A snapshot a node reads from a file its host names (RestoreActorWhole with `file`, docs/protocol.md
// §8.9). Invariant: the bytes returned are exactly the file's, read only from an absolute path to a
// regular file whose size is the trailer's; anything else is refused before a byte is read — a missing
// or resized file is DATA_LOSS naming the trailer's digest, a relative path INVALID_ARGUMENT — so the
// caller's digest check (install) always runs on a whole file of the announced size.
import { closeSync, constants, fstatSync, openSync, read, readSync } from "node:fs";
import { promisify } from "node:util";
import { isAbsolute } from "node:path";
import type { SnapshotTrailer } from "../gen/harnesshost/v1/actors_pb.js";
import { ErrorCode, HostError, invalidArgument } from "../errors/index.js";

/**
 * Files up to this size are read with synchronous calls (microseconds from the page cache, as the host's
 * store reads its small blobs, src/snapshot/store.ts SYNC_READ_MAX_BYTES); larger ones asynchronously.
 */
const SYNC_READ_MAX_BYTES = 2 * 1024 * 1024;

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
