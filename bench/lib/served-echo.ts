// The served echo set-up the turn profiles drive: a host on a given journal with the echo harness on the
// spawned runtime ("necho", a host-spawned node), served over a unix socket, with a Sessions client.
// Invariant: close releases everything it opened, in reverse order — client, server, host (and with it
// the journal); the scratch directory stays the caller's.
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Host } from "../../src/host/index.js";
import type { Journal } from "../../src/journal/types.js";
import { startServer } from "../../src/server/index.js";
import { createClient } from "../../src/wire/index.js";
import type { ScratchDir } from "./tmp.js";

const SILENT = { debug() {}, info() {}, warn() {}, error() {} };

const sessionsClient = (addr: string) => createClient(Sessions, addr);
type SessionsClient = ReturnType<typeof sessionsClient>;

/** The spawned echo harness's name in a served echo host. */
export const SERVED_ECHO_HARNESS = "necho";

export interface ServedEcho {
  readonly client: SessionsClient;
  /** A fresh session on the spawned echo harness; its uid. */
  newSession(): Promise<string>;
  close(): Promise<void>;
}

/** Serves `journal` from a host whose data lives in `dir`, on `dir`/s.sock; `nodeIdleMs` as the host's. */
export async function openServedEcho(dir: ScratchDir, journal: Journal, nodeIdleMs: number): Promise<ServedEcho> {
  const host = await Host.open(
    {
      dataDir: dir.path,
      harnesses: [{ name: SERVED_ECHO_HARNESS, runtime: "spawned", target: "echo" }],
      defaultHarness: SERVED_ECHO_HARNESS,
      nodeIdleMs,
    },
    { journal },
  );
  const server = await startServer(host, {
    addr: `unix://${dir.file("s.sock")}`,
    registryAddr: "127.0.0.1:0",
    logger: SILENT,
  });
  const client = sessionsClient(server.addr);
  return {
    client,
    newSession: async () =>
      (await client.createSession({ session: { harness: SERVED_ECHO_HARNESS } })).metadata?.uid ?? "",
    async close() {
      client.close();
      await server.close(1000);
      await host.close();
    },
  };
}
