// Test fixtures for the gRPC server: a Host over a temp dir, servers on 127.0.0.1 port 0, typed
// clients, a captured log, and stream collection that keeps both the frames and the final status.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { HarnessRegistry } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { textMessage } from "../../src/controller/events.js";
import type { HostConfigInput } from "../../src/host/config.js";
import { Host, type HostOverrides } from "../../src/host/host.js";
import { ModelInterruptedError, type ModelProvider } from "../../src/model/types.js";
import { startServer, type RunningServer } from "../../src/server/server.js";
import { RpcError, createClient, type DialOptions, type MethodsOf, type ServiceClient } from "../../src/wire/index.js";

export type SessionsClient = ServiceClient<MethodsOf<typeof Sessions>>;
export type RegistryClient = ServiceClient<MethodsOf<typeof HarnessRegistry>>;

export interface Fixture {
  readonly dir: string;
  host: Host;
  server: RunningServer;
  sessions: SessionsClient;
  registry: RegistryClient;
  /** Every log line the server wrote, raw JSON text. */
  readonly logs: string[];
  /** Stops the server and host (keeps the data dir) and starts them again on it. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface FixtureOptions {
  readonly tokens?: readonly string[];
  /** A server token file (principals, digests, a JWT line), read and watched by the server. */
  readonly tokenFile?: string;
  /** How often the server reads the token file for a change, ms (ServerOptions.credentialPollMs). */
  readonly credentialPollMs?: number;
  readonly overrides?: HostOverrides;
  /** Metadata every client call carries. */
  readonly clientMetadata?: Readonly<Record<string, string>>;
  /** Host config beyond the fixture's data dir (limits, harnesses). */
  readonly config?: Omit<HostConfigInput, "dataDir">;
  /** Also serve the HTTP listener (Connect + console) here, e.g. "127.0.0.1:0". */
  readonly httpAddr?: string;
}

export async function startFixture(opts: FixtureOptions = {}): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), "hh-server-"));
  const logs: string[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void logs.push(line) });
  const dial: DialOptions = opts.clientMetadata ? { metadata: opts.clientMetadata } : {};
  const boot = async (): Promise<Pick<Fixture, "host" | "server" | "sessions" | "registry">> => {
    const host = await Host.open({ nodeIdleMs: 0, ...opts.config, dataDir: dir }, opts.overrides ?? {});
    const server = await startServer(host, {
      addr: "127.0.0.1:0",
      registryAddr: "127.0.0.1:0",
      logger,
      ...(opts.tokens ? { tokens: opts.tokens } : {}),
      ...(opts.tokenFile ? { tokenFile: opts.tokenFile } : {}),
      ...(opts.credentialPollMs !== undefined ? { credentialPollMs: opts.credentialPollMs } : {}),
      ...(opts.httpAddr ? { httpAddr: opts.httpAddr } : {}),
    });
    return {
      host,
      server,
      sessions: createClient(Sessions, server.addr, dial),
      registry: createClient(HarnessRegistry, server.registryAddr, dial),
    };
  };
  const stop = async (f: Pick<Fixture, "host" | "server" | "sessions" | "registry">): Promise<void> => {
    f.sessions.close();
    f.registry.close();
    await f.server.close(1000);
    await f.host.close();
  };
  const fixture: Fixture = {
    dir,
    logs,
    ...(await boot()),
    async restart() {
      await stop(fixture);
      Object.assign(fixture, await boot());
    },
    async close() {
      await stop(fixture);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return fixture;
}

/** Reads a stream to its end; the frames that arrived and the final error (undefined for OK). */
export async function drain<T>(stream: AsyncIterable<T>): Promise<{ items: T[]; error: RpcError | undefined }> {
  const items: T[] = [];
  try {
    for await (const item of stream) items.push(item);
    return { items, error: undefined };
  } catch (err) {
    if (err instanceof RpcError) return { items, error: err };
    throw err;
  }
}

/** The gRPC status code a promise rejects with (fails the test if it resolves). */
export async function codeOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
  } catch (err) {
    if (err instanceof RpcError) return err.grpcCode;
    throw err;
  }
  throw new Error("expected the call to fail");
}

export function userInput(text: string) {
  return textMessage("user", text);
}

/**
 * A model that answers like echo but holds every call until `release()` — so a test can keep a
 * turn in flight without sleeping. `entered` resolves when the first call arrives.
 */
export function gatedEchoModel(): { model: ModelProvider; entered: Promise<void>; release(): void } {
  let open!: () => void;
  let signalEntered!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const entered = new Promise<void>((r) => (signalEntered = r));
  const model: ModelProvider = {
    name: "gated-echo",
    async invoke(request, opts) {
      signalEntered();
      await new Promise<void>((resolve, reject) => {
        void gate.then(resolve);
        const abort = (): void =>
          reject(new ModelInterruptedError("model call cancelled", { cause: opts.signal?.reason }));
        if (opts.signal?.aborted) abort();
        else opts.signal?.addEventListener("abort", abort, { once: true });
      });
      const last = request.messages[request.messages.length - 1];
      let text = "";
      for (const part of last?.parts ?? []) if (part.part.case === "text") text += part.part.value.text;
      return { message: textMessage("assistant", `echo:${text}`) };
    },
  };
  return { model, entered, release: () => open() };
}
