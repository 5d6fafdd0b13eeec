// Turns the shared host flags into a journal URL or a SessionsApi. Invariants: --server selects the
// remote API and nothing else opens a local journal; without it, --journal beats --data. Each API's
// module is imported only when chosen, so a remote command never loads the in-process host.
import { join } from "node:path";
import type { SessionsApi } from "./api.js";
import { str, type FlagValues } from "./command.js";

export const DEFAULT_DATA_DIR = "./.harnesshost";

export function journalUrl(values: FlagValues): string {
  return str(values, "journal") ?? join(str(values, "data") ?? DEFAULT_DATA_DIR, "journal.db");
}

export async function openApi(values: FlagValues, opts: { readOnly?: boolean } = {}): Promise<SessionsApi> {
  if (str(values, "server")) {
    const { GrpcApi } = await import("./grpc-api.js");
    return GrpcApi.open(values);
  }
  const journal = str(values, "journal");
  const { InProcessApi } = await import("./inprocess-api.js");
  return InProcessApi.open({
    dataDir: str(values, "data") ?? DEFAULT_DATA_DIR,
    ...(journal ? { journal } : {}),
    nodeIdleMs: 0,
    readOnly: opts.readOnly === true,
  });
}
