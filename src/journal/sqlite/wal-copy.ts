// A read-only view of a WAL-mode SQLite journal whose directory this process cannot write and whose
// -shm is missing (SQLite then cannot open it at all: every WAL reader needs a -shm beside the file).
// Invariant: the journal and its -wal are copied, as they are, into a fresh private directory, so the
// copy holds every committed frame (the records an unclean shutdown left un-checkpointed) and the
// original directory is never written; the copy is removed when the journal closes.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface WalCopy {
  /** The copied journal file (its -wal beside it). */
  readonly path: string;
  /** Removes the copy. */
  remove(): void;
}

export function copyWithWal(path: string): WalCopy {
  const dir = mkdtempSync(join(tmpdir(), "hh-readonly-"));
  try {
    const copy = join(dir, "journal.db");
    copyFileSync(path, copy);
    copyFileSync(`${path}-wal`, `${copy}-wal`);
    return { path: copy, remove: () => rmSync(dir, { recursive: true, force: true }) };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
