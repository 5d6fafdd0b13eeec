// Where the listeners may bind. Invariants: the operator registry listens only on a literal loopback
// IP (127.0.0.0/8 or ::1), and the Sessions listener only on a literal loopback IP or a unix socket,
// unless TLS and a bearer token are both configured; the Sessions and registry listeners never share
// a port; the HTTP listener (Connect + console, docs/console.md) follows the Sessions rule but only on
// TCP, and shares no port with either; the registry and HTTP listeners can each be turned off (LISTENER_OFF);
// all of it is checked before anything is opened.
import { isIP } from "node:net";
import { ErrorCode, HostError } from "../errors/index.js";
import { parseAddress, type Address } from "../wire/index.js";

function refuse(message: string): HostError {
  return new HostError(ErrorCode.InvalidArgument, message);
}

export function isLoopbackLiteral(host: string): boolean {
  if (isIP(host) === 4) return host.split(".")[0] === "127";
  if (isIP(host) === 6) return /^(0{0,4}:){2,7}0{0,3}1$/.test(host) || host === "::1";
  return false;
}

/** Throws InvalidArgument when the pair of addresses is not allowed. */
export function checkListenAddresses(
  addr: string,
  registryAddr: string,
  secured: boolean,
  httpAddr?: string,
): { sessions: Address; registry?: Address; http?: Address } {
  const sessions = parseAddress(addr);
  const registry = registryAddr === LISTENER_OFF ? undefined : parseAddress(registryAddr);
  if (!secured && registry !== undefined) {
    if (registry.kind !== "tcp" || !isLoopbackLiteral(registry.host)) {
      throw refuse(
        `--registry-addr ${JSON.stringify(registryAddr)} must be a literal loopback IP and port (127.0.0.1:PORT or [::1]:PORT) unless both TLS and a bearer token are configured`,
      );
    }
  }
  const samePort =
    sessions.kind === "tcp" && registry?.kind === "tcp" && sessions.port !== 0 && sessions.port === registry.port;
  const samePath = sessions.kind === "unix" && registry?.kind === "unix" && sessions.path === registry.path;
  if (samePort || samePath)
    throw refuse(`the Sessions listener (${addr}) and the registry listener (${registryAddr}) must not share a port`);
  if (!secured && sessions.kind === "tcp" && !isLoopbackLiteral(sessions.host)) {
    throw refuse(
      `--addr ${JSON.stringify(addr)} must be a literal loopback IP and port (127.0.0.1:PORT or [::1]:PORT) or a unix socket unless both TLS (--tls-cert, --tls-key) and a bearer token (--token-file) are configured`,
    );
  }
  const served = { sessions, ...(registry ? { registry } : {}) };
  if (httpAddr === undefined || httpAddr === LISTENER_OFF) return served;
  return { ...served, http: checkHttpAddress(httpAddr, secured, registry ? [sessions, registry] : [sessions]) };
}

/**
 * The value of --registry-addr or --http-addr that serves no such listener. The registry is on by
 * default (127.0.0.1:7234); the reference serves it only when asked, so `--registry-addr off` is its
 * behaviour (docs/migrating-from-go.md).
 */
export const LISTENER_OFF = "off";

function checkHttpAddress(httpAddr: string, secured: boolean, others: readonly Address[]): Address {
  const http = parseAddress(httpAddr);
  if (http.kind !== "tcp") throw refuse(`--http-addr ${JSON.stringify(httpAddr)} must be host:port (or off)`);
  if (!secured && !isLoopbackLiteral(http.host)) {
    throw refuse(
      `--http-addr ${JSON.stringify(httpAddr)} must be a literal loopback IP and port (127.0.0.1:PORT or [::1]:PORT) unless both TLS (--tls-cert, --tls-key) and a bearer token (--token-file) are configured`,
    );
  }
  if (http.port !== 0 && others.some((o) => o.kind === "tcp" && o.port === http.port)) {
    throw refuse(`the HTTP listener (${httpAddr}) must not share a port with the Sessions or registry listener`);
  }
  return http;
}
