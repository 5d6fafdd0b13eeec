// An in-process host serving the built-in echo harness over a SQLite journal, for the figures that
// drive turns through placement: on the local runtime (in-process harness) or the spawned runtime (a
// host-spawned node process over a unix socket). Invariant: turns go through the same Placer.exec a
// served host uses (admission, fence, history cache, controller); only the client's gRPC hop is absent.
import { textMessage } from "../../src/controller/events.js";
import type { Journal } from "../../src/journal/types.js";
import type { TurnResult } from "../../src/controller/index.js";
import { Host } from "../../src/host/index.js";

export interface EchoHost {
  readonly journal: Journal;
  readonly runtime: "local" | "spawned";
  newSession(): Promise<string>;
  turn(session: string, text: string): Promise<TurnResult>;
  suspend(session: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Opens an echo host whose data lives in `dataDir`; `runtime` picks where the harness runs (default
 * local); `journal` is a journal URL (default: SQLite in `dataDir`).
 */
export async function openEchoHost(
  dataDir: string,
  runtime: "local" | "spawned" = "local",
  journal = `${dataDir}/journal.db`,
): Promise<EchoHost> {
  const signal = new AbortController().signal;
  const harness = runtime === "local" ? "echo" : "necho";
  const host = await Host.open({
    dataDir,
    journal,
    defaultHarness: harness,
    ...(runtime === "spawned"
      ? { harnesses: [{ name: harness, runtime: "spawned" as const, target: "echo" }], nodeIdleMs: 60_000 }
      : {}),
  });
  return {
    journal: host.journal,
    runtime,
    newSession: async () => (await host.createSession({ harness })).uid,
    turn: (session, text) => host.placer.exec({ session, inputs: [textMessage("user", text)], signal }),
    suspend: async (session) => void (await host.placer.suspend(session, signal)),
    close: () => host.close(),
  };
}
