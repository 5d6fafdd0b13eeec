// openJournal, the one place a journal URL is turned into a backend. Its own module so the package's
// public declarations reach no backend's driver types.
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ErrorCode, HostError } from "../errors/index.js";
import { MemoryJournal } from "./memory/journal.js";
import { SqliteJournal } from "./sqlite/journal.js";
import type { Journal } from "./types.js";

export interface OpenJournalOptions {
  /** Read-only (verify, replay, export): SQLite opens as SqliteJournalOptions.readOnly says; nothing is created. */
  readonly readOnly?: boolean;
}

/**
 * Opens a journal by URL: "memory:" (in process), "sqlite:PATH" or a bare PATH (SQLite; parent
 * directories are created unless read-only).
 */
export async function openJournal(url: string, opts: OpenJournalOptions = {}): Promise<Journal> {
  if (url === "memory:") return new MemoryJournal();
  if (url.startsWith("postgres://") || url.startsWith("postgresql://")) {
    return (await import("./postgres/journal.js")).PostgresJournal.open(url);
  }
  const path = url.startsWith("sqlite:") ? url.slice("sqlite:".length) : url;
  if (path === "" || /^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    throw new HostError(ErrorCode.InvalidArgument, `unsupported journal URL ${JSON.stringify(url)}`);
  }
  if (opts.readOnly === true && path !== ":memory:") return SqliteJournal.open(path, { readOnly: true });
  if (path !== ":memory:") mkdirSync(dirname(resolve(path)), { recursive: true });
  return SqliteJournal.open(path);
}
