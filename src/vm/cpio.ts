// A newc ("070701") cpio writer for initramfs images. Invariant: the archive is a pure function of
// its entries — entries are written sorted by path with fixed owner (0:0), mtime 0 and inode numbers
// assigned in that order — so the same files always give byte-identical archives.

export type CpioEntry =
  | { readonly kind: "dir"; readonly path: string; readonly mode: number }
  | { readonly kind: "file"; readonly path: string; readonly mode: number; readonly data: Uint8Array }
  | { readonly kind: "symlink"; readonly path: string; readonly target: string };

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const TRAILER = "TRAILER!!!";

function hex8(n: number): string {
  return n.toString(16).padStart(8, "0");
}

function pad4(length: number): number {
  return (4 - (length % 4)) % 4;
}

function header(ino: number, mode: number, nlink: number, size: number, nameSize: number): string {
  // magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor, devminor, rdevmajor, rdevminor, namesize, check
  return `070701${[ino, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, nameSize, 0].map(hex8).join("")}`;
}

function record(ino: number, name: string, mode: number, nlink: number, data: Uint8Array): Buffer[] {
  const nameBytes = Buffer.from(`${name}\0`, "utf8");
  const head = Buffer.from(header(ino, mode, nlink, data.length, nameBytes.length), "latin1");
  return [
    head,
    nameBytes,
    Buffer.alloc(pad4(head.length + nameBytes.length)),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength),
    Buffer.alloc(pad4(data.length)),
  ];
}

/** The archive of `entries` (paths relative to the root, no leading slash; each path once). */
export function writeCpio(entries: readonly CpioEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const parts: Buffer[] = [];
  let ino = 0;
  let previous: string | undefined;
  for (const e of sorted) {
    if (e.path === previous) throw new Error(`cpio: ${e.path} listed twice`);
    if (e.path.startsWith("/") || e.path === "")
      throw new Error(`cpio: path ${JSON.stringify(e.path)} must be relative`);
    previous = e.path;
    ino += 1;
    switch (e.kind) {
      case "dir":
        parts.push(...record(ino, e.path, S_IFDIR | (e.mode & 0o7777), 2, new Uint8Array(0)));
        break;
      case "file":
        parts.push(...record(ino, e.path, S_IFREG | (e.mode & 0o7777), 1, e.data));
        break;
      case "symlink":
        parts.push(...record(ino, e.path, S_IFLNK | 0o777, 1, Buffer.from(e.target, "utf8")));
        break;
      default: {
        const never: never = e;
        throw new Error(`cpio: unknown entry ${JSON.stringify(never)}`);
      }
    }
  }
  parts.push(...record(0, TRAILER, 0, 1, new Uint8Array(0)));
  return Buffer.concat(parts);
}
