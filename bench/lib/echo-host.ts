// An in-process host serving the built-in echo harness on the local runtime over a SQLite journal, for
// the figures that drive turns through placement. Invariant: turns go through the same Placer.exec a
// served host uses (admission, fence, history cache, controller); only the gRPC hop is absent.
import { textMessage } from "../../src/controller/events.js";
import type { Journal } from "../../src/journal/types.js";
import type { TurnResult } from "../../src/controller/index.js";
import { guardImport, Unavailable } from "./lazy.js";

export interface EchoHost {
  readonly journal: Journal;
  /** How it was assembled: "Host" (src/host) or "Placer" (placement directly, when Host cannot load). */
  readonly assembly: "Host" | "Placer";
  newSession(): Promise<string>;
  turn(session: string, text: string): Promise<TurnResult>;
  suspend(session: string): Promise<void>;
  close(): Promise<void>;
}

/** Opens an echo host whose data lives in `dataDir`. */
export async function openEchoHost(dataDir: string): Promise<EchoHost> {
  const signal = new AbortController().signal;
  const run = (placer: { exec(req: { session: string; inputs: ReturnType<typeof textMessage>[]; signal: AbortSignal }): Promise<TurnResult> }) =>
    (session: string, text: string) => placer.exec({ session, inputs: [textMessage("user", text)], signal });
  try {
    const { Host } = await guardImport(() => import("../../src/host/index.js"), "src/host");
    const host = await Host.open({ dataDir, journal: `${dataDir}/journal.db`, defaultHarness: "echo" });
    return {
      journal: host.journal,
      assembly: "Host",
      newSession: async () => (await host.createSession({ harness: "echo" })).uid,
      turn: run(host.placer),
      suspend: async (session) => void (await host.placer.suspend(session, signal)),
      close: () => host.close(),
    };
  } catch (err) {
    if (!(err instanceof Unavailable)) throw err;
  }
  const [{ SqliteJournal }, { Placer, HarnessRegistry }, { LocalRuntime }, { echoModel }, { newSessionUid }, echo] = await Promise.all([
    import("../../src/journal/sqlite.js"),
    import("../../src/placement/index.js"),
    import("../../src/runtime/local.js"),
    import("../../src/model/index.js"),
    import("../../src/controller/ids.js"),
    import("../../harnesses/echoagent/index.js"),
  ]);
  const journal = SqliteJournal.open(`${dataDir}/journal.db`);
  const registry = new HarnessRegistry("echo");
  const runtime = new LocalRuntime(echo.default);
  registry.addStatic({ name: "echo", runtime, descriptorId: "", checkpointPolicy: "every-turn" });
  const placer = new Placer({ journal, model: echoModel, harnesses: registry });
  return {
    journal,
    assembly: "Placer",
    newSession: async () => (await journal.createSession({ uid: newSessionUid(), project: "default", harness: "echo" })).uid,
    turn: run(placer),
    suspend: async (session) => void (await placer.suspend(session, signal)),
    close: async () => {
      await runtime.close();
      await journal.close();
    },
  };
}
