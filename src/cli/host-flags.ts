// Turns the shared host flags into a journal URL or a SessionsApi. Invariants: --server selects the
// remote API and nothing else opens a local journal; without it, --journal beats --data; a local
// SQLite journal is created only when the caller says so (exec starting a new session) — every other
// command refuses a missing journal file with NOT_FOUND and creates nothing. Each API's module is
// imported only when chosen, so a remote command never loads the in-process host.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { SessionsApi } from "./api.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { str, type FlagValues } from "./command.js";
import type { OpenOptions } from "./open-options.js";

export const DEFAULT_DATA_DIR = "./.harnesshost";

export type { OpenOptions } from "./open-options.js";

export function journalUrl(values: FlagValues): string {
  return str(values, "journal") ?? join(str(values, "data") ?? DEFAULT_DATA_DIR, "journal.db");
}

/** The SQLite file a journal URL names, or undefined for a server-backed or in-memory journal. */
function sqlitePath(url: string): string | undefined {
  if (url === "memory:" || /^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return undefined;
  const path = url.startsWith("sqlite:") ? url.slice("sqlite:".length) : url;
  return path === "" || path === ":memory:" ? undefined : path;
}

/** Refuses (NOT_FOUND) a local journal file that does not exist; returns its URL. */
export function existingJournalUrl(values: FlagValues): string {
  const url = journalUrl(values);
  const path = sqlitePath(url);
  if (path !== undefined && !existsSync(path)) {
    const flag = str(values, "journal") !== undefined ? "--journal" : "--data";
    throw new HostError(
      ErrorCode.NotFound,
      `no journal at ${path}: check ${flag} (only exec creates a journal; or use --server to reach a running host)`,
    );
  }
  return url;
}

export async function openApi(values: FlagValues, options: OpenOptions = {}): Promise<SessionsApi> {
  if (str(values, "server")) {
    const { GrpcApi } = await import("./grpc-api.js");
    return GrpcApi.open(values);
  }
  if (options.create !== true) existingJournalUrl(values);
  const journal = str(values, "journal");
  const { InProcessApi } = await import("./inprocess-api.js");
  return InProcessApi.open({
    dataDir: str(values, "data") ?? DEFAULT_DATA_DIR,
    ...(journal ? { journal } : {}),
    nodeIdleMs: 0,
    readOnly: options.readOnly === true,
  });
}
