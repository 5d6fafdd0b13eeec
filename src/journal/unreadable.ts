// Which failures mean the journal's storage itself cannot be read (as opposed to a bad request or a
// tampered record): a corrupt SQLite page or file, an I/O error, PostgreSQL's data-corruption and I/O
// classes. Invariant: one classifier, used by health (NOT_SERVING) and by the status a caller gets.
import { HostError } from "../errors/index.js";
import { UnreadableStorage } from "./chain.js";

const SQLITE_UNREADABLE = ["SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_IOERR"];
/** data_corrupted, index_corrupted, io_error. */
const PG_UNREADABLE = new Set(["XX001", "XX002", "58030"]);

export function isJournalUnreadable(err: unknown, depth = 0): boolean {
  if (err instanceof UnreadableStorage) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string") {
    if (SQLITE_UNREADABLE.some((p) => code.startsWith(p))) return true;
    if (PG_UNREADABLE.has(code)) return true;
  }
  if (err instanceof HostError && depth < 4) return isJournalUnreadable(err.cause, depth + 1);
  return false;
}
