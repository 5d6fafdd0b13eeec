// The harnesshost gRPC server: Sessions and the Console views (+ health and reflection) on the main listener and the
// HarnessRegistry on its own operator listener, both behind the same call policy; optionally the HTTP
// listener (Connect + the console, docs/console.md) serving the very same Sessions implementation
// object, the registry's read methods and the Console views behind the same auth. Invariants: address
// misconfiguration is refused before anything binds; stored registrations are servable before the
// first call is accepted, and those made later by other hosts sharing the journal are followed;
// close() stops accepting, lets in-flight calls finish for the grace period,
// then forces; health turns NOT_SERVING once a call finds the journal unreadable and SERVING again once
// a periodic probe reads all of it (journal-health.ts).
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { HarnessRegistry } from "../gen/agentsessions/v1/harness_registry_pb.js";
import { Sessions } from "../gen/agentsessions/v1/session_pb.js";
import type { Host } from "../host/host.js";
import { Console } from "../gen/harnesshost/v1/console_pb.js";
import type { ConsoleAssets } from "../http/assets.js";
import type { RunningHttp } from "../http/server.js";
import { metricsHandler } from "../obs/metrics-http.js";
import { overLimit } from "../limits/index.js";
import { addService, type DecodeBound, listen } from "../wire/index.js";
import { consoleService } from "./console-service.js";
import { BearerAuth } from "./auth.js";
import { type LoadedCredentials, loadCredentials, watchCredentials } from "./credential-file.js";
import { callPolicy, type CallPolicyOptions, type ServerLogger } from "./call-policy.js";
import { turnsService } from "./turns-service.js";
import { budgetOf } from "./exec-stream.js";
import { Turns } from "../gen/harnesshost/v1/turns_pb.js";
import { HarnessCatalog, REGISTRATION_POLL_MS } from "../host/harness-catalog.js";
import { Health } from "./health.js";
import { JournalHealth, withJournalHealth } from "./journal-health.js";
import { checkListenAddresses, LISTENER_OFF } from "./listen-policy.js";
import { addLazyReflection } from "./reflection.js";
import { registryService } from "./registry-service.js";
import { harnessVersionsService, sessionVersionsService } from "./versions-service.js";
import { HarnessVersions, SessionVersions } from "../gen/harnesshost/v1/versions_pb.js";
import { sessionsService } from "./sessions-service.js";

export const SESSIONS_SERVICE = "agentsessions.v1.Sessions";
export const DEFAULT_GRACE_MS = 5_000;

export interface TlsFiles {
  /** PEM certificate chain. */
  readonly cert: Buffer | string;
  /** PEM private key. */
  readonly key: Buffer | string;
}

export interface ServerOptions {
  readonly addr: string;
  /** The operator registry's address; LISTENER_OFF ("off") serves no registry listener. */
  readonly registryAddr: string;
  /** Bare bearer tokens, each an admin in every project (tests, embedders); tokenFile is serve's. */
  readonly tokens?: readonly string[];
  /**
   * The server's token file (principals, digests, the JWT line; docs/operations.md "Principals, roles
   * and projects"), read now and again when it changes or on SIGHUP.
   */
  readonly tokenFile?: string;
  /**
   * How often `tokenFile` (and the JWT key files it names) are read for a change, ms. Default
   * CREDENTIAL_POLL_MS (1,000: a rotation is in force within a second); 0 reloads on SIGHUP only.
   */
  readonly credentialPollMs?: number;
  /** What `tokenFile` said when the caller already read it (serve checks it before anything opens); read here when absent. */
  readonly tokenFileLoaded?: LoadedCredentials;
  readonly tls?: TlsFiles;
  readonly logger: ServerLogger;
  /** The HTTP listener's host:port; undefined or "off" serves none. */
  readonly httpAddr?: string;
  /** The console's files (default: the package's dist/console). */
  readonly consoleAssets?: ConsoleAssets;
  /** How often an unreadable journal is probed (ms); default JOURNAL_PROBE_MS (journal-health.ts). */
  readonly journalProbeMs?: number;
}

export interface RunningServer {
  /** The bound Sessions address (port 0 resolved). */
  readonly addr: string;
  /** The bound registry address, or LISTENER_OFF when no registry listener is served. */
  readonly registryAddr: string;
  /** The console URL on the HTTP listener (undefined when it is off). */
  readonly httpUrl?: string;
  close(graceMs?: number): Promise<void>;
}

export async function startServer(host: Host, opts: ServerOptions): Promise<RunningServer> {
  const tokens = opts.tokens ?? [];
  const secured = opts.tls !== undefined && (tokens.length > 0 || opts.tokenFile !== undefined);
  const listeners = checkListenAddresses(opts.addr, opts.registryAddr, secured, opts.httpAddr);
  const loaded = opts.tokenFile !== undefined ? (opts.tokenFileLoaded ?? loadCredentials(opts.tokenFile)) : undefined;
  const auth = loaded ? new BearerAuth(loaded.credentials) : tokens.length > 0 ? new BearerAuth(tokens) : undefined;
  const watcher =
    auth && loaded && opts.tokenFile !== undefined
      ? watchCredentials(opts.tokenFile, auth, opts.logger, loaded.keyFiles, opts.credentialPollMs)
      : undefined;
  const policyOptions = (listener: string): CallPolicyOptions => ({
    logger: opts.logger,
    listener,
    logFieldChars: host.limits.logFieldChars,
    ...(host.hostMetrics ? { metrics: host.hostMetrics } : {}),
    ...(auth ? { auth } : {}),
  });
  const policy = (listener: string) => callPolicy(policyOptions(listener));

  const catalog = new HarnessCatalog(host);
  await catalog.load();
  catalog.follow(host.reads.sharedByHosts ? REGISTRATION_POLL_MS : 0);

  const sessions = new Server({
    interceptors: [policy("sessions")],
    "grpc.max_receive_message_length": host.limits.requestBytes,
    // channelz stays on for the listeners: grpc-js 1.14 with "grpc.enable_channelz": 0 left a drained
    // server's HTTP/2 sessions open, so `serve` did not exit after "stopped" (hostile-node-drain.test).
  });
  const health = new Health({ "": "SERVING", [SESSIONS_SERVICE]: "SERVING" });
  const journalHealth = new JournalHealth({
    probe: () => host.reads.probe(),
    ...(opts.journalProbeMs !== undefined ? { probeMs: opts.journalProbeMs } : {}),
    setServing(serving, err) {
      const status = serving ? "SERVING" : "NOT_SERVING";
      health.setStatus("", status);
      health.setStatus(SESSIONS_SERVICE, status);
      if (serving) opts.logger.info({}, "journal readable again: health SERVING");
      else
        opts.logger.error({ err: err instanceof Error ? err.name : "error" }, "journal unreadable: health NOT_SERVING");
    },
  });
  const unreadable = (err: unknown): void => journalHealth.unreadable(err);
  // One implementation object per service, served by every transport.
  const sessionsImpl = withJournalHealth(sessionsService(host), unreadable);
  const registryImpl = registryService(catalog);
  const consoleImpl = withJournalHealth(consoleService(host), unreadable);
  const decodeBound: DecodeBound = {
    maxMessages: host.limits.requestMessages,
    refuse: (_count, typeName) =>
      overLimit("requestMessages", host.limits.requestMessages, undefined, `${typeName}'s protobuf messages`),
  };
  addService(sessions, Sessions, sessionsImpl, decodeBound);
  addService(sessions, Console, consoleImpl);
  const sessionVersionsImpl = sessionVersionsService(host);
  const harnessVersionsImpl = harnessVersionsService(catalog);
  addService(sessions, SessionVersions, sessionVersionsImpl, decodeBound);
  // Many Exec turns over one stream (§21): each runs Sessions' own Exec handler.
  const stopping = new AbortController();
  addService(
    sessions,
    Turns,
    turnsService({
      exec: (req, ctx) => sessionsImpl.exec(req, ctx),
      budget: budgetOf(host),
      streamBufferBytes: host.limits.streamBufferBytes,
      turnsPerStream: host.limits.turnsPerStream,
      policy: policyOptions("sessions"),
      stopping: stopping.signal,
    }),
    decodeBound,
  );
  health.addToServer(sessions);
  addLazyReflection(sessions);

  const registry = listeners.registry ? new Server({ interceptors: [policy("registry")] }) : undefined;
  if (registry) {
    addService(registry, HarnessRegistry, registryImpl);
    addService(registry, HarnessVersions, harnessVersionsImpl);
  }

  const credentials = opts.tls
    ? ServerCredentials.createSsl(
        null,
        [{ cert_chain: Buffer.from(opts.tls.cert), private_key: Buffer.from(opts.tls.key) }],
        false,
      )
    : undefined;
  let addr: string;
  let registryAddr: string;
  let http: RunningHttp | undefined;
  try {
    addr = await listen(sessions, opts.addr, credentials);
    registryAddr = registry ? await listen(registry, opts.registryAddr, credentials) : LISTENER_OFF;
    if (listeners.http !== undefined && opts.httpAddr !== undefined) {
      // The HTTP console (Connect, its assets) loads only when its listener is on: a start with
      // --http-addr off never pays for it (docs/performance.md "serve_ready_ms").
      const [{ ConsoleAssets }, { routeService }, { httpPolicy }, { startHttp }] = await Promise.all([
        import("../http/assets.js"),
        import("../http/connect-service.js"),
        import("../http/policy.js"),
        import("../http/server.js"),
      ]);
      http = await startHttp({
        addr: opts.httpAddr,
        secured,
        ...(opts.tls ? { tls: opts.tls } : {}),
        interceptors: [
          httpPolicy({
            logger: opts.logger,
            logFieldChars: host.limits.logFieldChars,
            ...(auth ? { auth } : {}),
            ...(host.hostMetrics ? { metrics: host.hostMetrics } : {}),
          }),
        ],
        requestBytes: host.limits.requestBytes,
        decodeBound: { bound: decodeBound, services: new Set([Sessions.typeName, SessionVersions.typeName]) },
        assets: opts.consoleAssets ?? new ConsoleAssets(),
        ...(host.hostMetrics
          ? { metrics: { handle: metricsHandler(host.hostMetrics), ...(auth ? { auth } : {}) } }
          : {}),
        routes(router) {
          routeService(router, Sessions, sessionsImpl);
          // Read-only: registering and retiring stay on the operator (registry) listener.
          routeService(router, HarnessRegistry, registryImpl, {
            methods: ["listHarnesses", "getHarness"],
            why: "the HTTP listener serves the registry read-only; register, retire and free on the registry listener (--registry-addr)",
          });
          routeService(router, Console, consoleImpl);
          routeService(router, SessionVersions, sessionVersionsImpl);
          routeService(router, HarnessVersions, harnessVersionsImpl, {
            methods: ["listVersions"],
            why: "the HTTP listener lists harness versions read-only; retire versions on the registry listener (--registry-addr)",
          });
        },
      });
    }
  } catch (err) {
    watcher?.stop();
    sessions.forceShutdown();
    registry?.forceShutdown();
    await catalog.stop();
    throw err;
  }

  let closing: Promise<void> | undefined;
  return {
    addr,
    registryAddr,
    ...(http ? { httpUrl: http.url } : {}),
    close(graceMs = DEFAULT_GRACE_MS) {
      closing ??= (async () => {
        journalHealth.stop();
        watcher?.stop();
        stopping.abort(); // turn streams take no new turn and end once theirs are answered
        health.setStatus("", "NOT_SERVING");
        health.setStatus(SESSIONS_SERVICE, "NOT_SERVING");
        await Promise.all([shutdown(sessions, graceMs), registry && shutdown(registry, graceMs), http?.close(graceMs)]);
        await catalog.stop();
      })();
      return closing;
    },
  };
}

/** Graceful stop bounded by `graceMs`, then forced. */
function shutdown(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
