// `connect()`: one client for a host's Sessions API and, when its address is given, its operator
// HarnessRegistry. Invariants: the token is sent only as `authorization: Bearer …` and never appears
// in an error; with `tls` the channel is TLS, else plaintext (loopback or a trusted network only);
// close() closes every connection the client opened.
import { REQUEST_ID_HEADER } from "../wire/request-id.js";
import { credentials as grpcCredentials, type ChannelCredentials } from "@grpc/grpc-js";
import { HarnessRegistry } from "../gen/agentsessions/v1/harness_registry_pb.js";
import { Sessions } from "../gen/agentsessions/v1/session_pb.js";
import { Console } from "../gen/harnesshost/v1/console_pb.js";
import { createClient, type DialOptions, type ServiceClient } from "../wire/client.js";
import type { MethodsOf } from "../wire/service.js";
import { ErrorCode, HarnessHostError } from "./errors.js";
import { HarnessesClient } from "./harnesses.js";
import type { CallOptions } from "./options.js";
import { TurnStream } from "./turn-stream.js";
import { Turns } from "../gen/harnesshost/v1/turns_pb.js";
import { SessionsClient } from "./sessions.js";
import { HarnessVersions, SessionVersions } from "../gen/harnesshost/v1/versions_pb.js";
import { VersionsClient } from "./versions.js";

export interface TlsOptions {
  /** PEM of the CA that signed the server's certificate (default: the system roots). */
  readonly ca?: string | Uint8Array;
  /** PEM client certificate and key, for mutual TLS. */
  readonly cert?: string | Uint8Array;
  readonly key?: string | Uint8Array;
}

export interface ConnectOptions {
  /** The Sessions API: `host:port` (e.g. "127.0.0.1:7233") or `unix:///path`. */
  readonly address: string;
  /** The operator HarnessRegistry (e.g. "127.0.0.1:7234"); `harnesses` needs it. */
  readonly registryAddress?: string;
  /** A bearer token, when the host requires one (`serve --token-file`). */
  readonly token?: string;
  /**
   * Sent as `x-request-id` on every call of this client, so the host's log lines (and the harness
   * node's) for them correlate with the caller's; the host mints one per call when absent.
   */
  readonly requestId?: string;
  /** TLS: `true` for the system roots, or a CA (and client certificate) of your own. */
  readonly tls?: boolean | TlsOptions;
  /** Default relative deadline of every call (ms); a call's own options beat it. Default: none. */
  readonly timeoutMs?: number;
}

export interface HarnessHostClient {
  readonly sessions: SessionsClient;
  /** The operator registry; its calls fail with FAILED_PRECONDITION without `registryAddress`. */
  readonly harnesses: HarnessesClient;
  /** Harness versions: `upgrade` on the Sessions port; `list`/`retire` need `registryAddress`. */
  readonly versions: VersionsClient;
  /** Closes every connection; calls in flight fail with CANCELLED or UNAVAILABLE. */
  close(): void;
}

function bytes(v: string | Uint8Array | undefined): Buffer | null {
  return v === undefined ? null : Buffer.from(v);
}

function credentialsOf(tls: ConnectOptions["tls"]): ChannelCredentials | undefined {
  if (tls === undefined || tls === false) return undefined;
  if (tls === true) return grpcCredentials.createSsl();
  return grpcCredentials.createSsl(bytes(tls.ca), bytes(tls.key), bytes(tls.cert));
}

export function connect(options: ConnectOptions): HarnessHostClient {
  const credentials = credentialsOf(options.tls);
  const dial: DialOptions = {
    ...(credentials !== undefined ? { credentials } : {}),
    metadata: {
      ...(options.token !== undefined ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.requestId !== undefined ? { [REQUEST_ID_HEADER]: options.requestId } : {}),
    },
  };
  const defaults: CallOptions = options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {};
  const sessionsStub = createClient(Sessions, options.address, dial);
  const turnsStub = createClient(Turns, options.address, dial);
  const turns = new TurnStream(turnsStub);
  let registryStub: ServiceClient<MethodsOf<typeof HarnessRegistry>> | undefined;
  const registry = (): ServiceClient<MethodsOf<typeof HarnessRegistry>> => {
    if (options.registryAddress === undefined)
      throw new HarnessHostError(ErrorCode.FailedPrecondition, "connect() was given no registryAddress");
    registryStub ??= createClient(HarnessRegistry, options.registryAddress, dial);
    return registryStub;
  };
  let consoleStub: ServiceClient<MethodsOf<typeof Console>> | undefined;
  const views = (): ServiceClient<MethodsOf<typeof Console>> => {
    consoleStub ??= createClient(Console, options.address, dial);
    return consoleStub;
  };
  let upgradeStub: ServiceClient<MethodsOf<typeof SessionVersions>> | undefined;
  let versionsStub: ServiceClient<MethodsOf<typeof HarnessVersions>> | undefined;
  const upgrades = (): ServiceClient<MethodsOf<typeof SessionVersions>> => {
    upgradeStub ??= createClient(SessionVersions, options.address, dial);
    return upgradeStub;
  };
  const versions = (): ServiceClient<MethodsOf<typeof HarnessVersions>> => {
    if (options.registryAddress === undefined)
      throw new HarnessHostError(ErrorCode.FailedPrecondition, "connect() was given no registryAddress");
    versionsStub ??= createClient(HarnessVersions, options.registryAddress, dial);
    return versionsStub;
  };
  return {
    sessions: new SessionsClient(sessionsStub, defaults, views, turns),
    harnesses: new HarnessesClient(registry, defaults),
    versions: new VersionsClient(upgrades, versions, defaults),
    close() {
      turns.close();
      turnsStub.close();
      sessionsStub.close();
      registryStub?.close();
      consoleStub?.close();
      upgradeStub?.close();
      versionsStub?.close();
    },
  };
}
