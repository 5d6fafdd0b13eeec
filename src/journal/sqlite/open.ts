// Opening the SQLite journal's connection. Invariant: a writable connection is in WAL mode (where the
// file system allows it) with synchronous=FULL and the busy timeout, its schema migrated before any
// statement is prepared; a read-only one creates, switches and upgrades nothing, and reads a WAL file in
// a directory it cannot write from an image or a private copy, never from a stale image.
import { readFileSync, statSync } from "node:fs";
import type Database from "better-sqlite3";
import type { GroupCommitOptions } from "../commit-queue.js";
import type { WalCheckpointOptions } from "./checkpointer.js";
import { enableWal, migrate, requireReadableVersion } from "./schema.js";
import { openSqlite } from "./driver.js";
import { copyWithWal } from "./wal-copy.js";

export interface SqliteJournalOptions {
  /** How long a writer waits for another connection's lock (default 5000 ms). */
  readonly busyTimeoutMs?: number;
  /**
   * Open for reading only (verify, replay, export): nothing is created, switched or upgraded, and the
   * file may sit in a read-only directory. Every write fails.
   */
  readonly readOnly?: boolean;
  /**
   * Group commit (default on, `maxBatch` 256 writes): appends, batches and fenced appends that arrive
   * in the same event-loop turn share one transaction and one fsync, instead of one fsync each. Each is
   * still acknowledged only after its COMMIT. `false` commits every append on its own, synchronously
   * inside the call (the one-append-per-fsync baseline the bench measures against).
   */
  readonly groupCommit?: boolean | GroupCommitOptions;
  /**
   * WAL checkpoints (checkpointer.ts; default on, 1000 / 4000 pages, 64 commits): while commits
   * carry several writes (group commit under load) copied back into the database by a worker thread
   * instead of inside a COMMIT, the WAL restarted by the writing connection at `resetPages`; for a lone
   * writer SQLite's own auto-checkpoint at `backgroundPages`. `false` leaves SQLite's auto-checkpoint
   * (1000 pages, inside the crossing COMMIT) always.
   */
  readonly walCheckpoint?: boolean | WalCheckpointOptions;
}

/** A connection opened for the journal, and what to do after it closes (remove a private copy). */
export interface OpenedDatabase {
  readonly db: Database.Database;
  /** "wal" when the journal runs in WAL mode (the checkpointer then applies). */
  readonly mode: "wal" | "memory" | "read-only";
  readonly onClose?: () => void;
}

/** Opens (creating if needed) the file at `path`: WAL, synchronous=FULL, busy timeout, schema migrated. */
export function openWritable(path: string, busyTimeoutMs: number): OpenedDatabase {
  const db = openSqlite(path, { timeout: busyTimeoutMs });
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    const mode = enableWal(db, busyTimeoutMs);
    db.pragma("synchronous = FULL");
    migrate(db);
    return { db, mode };
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * A read-only connection. A WAL-mode file in a directory this process cannot write and without a
 * -shm (none can be made there) is read from an in-memory image of the file when it has no
 * un-checkpointed WAL frames (a cleanly stopped host leaves none), or, with frames left over by an
 * unclean shutdown, from a private copy of the file and its -wal (wal-copy.ts), removed on
 * close — never from a stale image. A -shm the unclean shutdown left behind is read as it is.
 */
export function openReadOnly(path: string, busyTimeoutMs: number): OpenedDatabase {
  let db: Database.Database;
  try {
    db = openSqlite(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
    try {
      db.pragma("user_version", { simple: true });
      db.prepare("SELECT count(*) FROM sqlite_master").get();
    } catch (err) {
      db.close();
      throw err;
    }
  } catch (err) {
    const code = String((err as { code?: unknown }).code ?? "");
    if (!code.startsWith("SQLITE_READONLY") && !code.startsWith("SQLITE_CANTOPEN")) throw err;
    const wal = statSync(`${path}-wal`, { throwIfNoEntry: false });
    if (wal !== undefined && wal.size > 0) return openCopy(path, busyTimeoutMs);
    const image = readFileSync(path);
    // Bytes 18 and 19 say WAL; an in-memory image is read with the rollback format (same pages).
    if (image.length > 19) {
      image[18] = 1;
      image[19] = 1;
    }
    db = openSqlite(image, { readonly: true });
  }
  try {
    requireReadableVersion(db);
    return { db, mode: "read-only" };
  } catch (err) {
    db.close();
    throw err;
  }
}

/** A read-only connection to a private copy of the file and its -wal, removed when the journal closes. */
function openCopy(path: string, busyTimeoutMs: number): OpenedDatabase {
  const copy = copyWithWal(path);
  let db: Database.Database | undefined;
  try {
    db = openSqlite(copy.path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
    requireReadableVersion(db);
    return { db, mode: "read-only", onClose: () => copy.remove() };
  } catch (err) {
    db?.close();
    copy.remove();
    throw err;
  }
}
