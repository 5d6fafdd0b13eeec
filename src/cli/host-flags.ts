// Turns the shared host flags into a journal URL or a SessionsApi. Invariant: --server selects the
// remote API and nothing else opens a local journal; without it, --journal beats --data.
import { join } from "node:path";
import type { SessionsApi } from "./api.js";
import { str, type FlagValues } from "./command.js";
import { InProcessApi } from "./inprocess-api.js";

export const DEFAULT_DATA_DIR = "./.harnesshost";

export function journalUrl(values: FlagValues): string {
  return str(values, "journal") ?? join(str(values, "data") ?? DEFAULT_DATA_DIR, "journal.db");
}

export type RemoteApiFactory = (values: FlagValues) => Promise<SessionsApi>;
let remoteFactory: RemoteApiFactory | undefined;

/** The gRPC client API registers itself here (src/cli/grpc-api.ts). */
export function setRemoteApiFactory(factory: RemoteApiFactory): void {
  remoteFactory = factory;
}

export async function openApi(values: FlagValues): Promise<SessionsApi> {
  if (str(values, "server")) {
    if (!remoteFactory) throw new Error("--server is not supported by this build");
    return remoteFactory(values);
  }
  const journal = str(values, "journal");
  return InProcessApi.open({
    dataDir: str(values, "data") ?? DEFAULT_DATA_DIR,
    ...(journal ? { journal } : {}),
    nodeIdleMs: 0,
  });
}
