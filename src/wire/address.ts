// Listen/dial addresses. Invariant: only plaintext-gRPC targets we can both bind and dial are accepted
// (`host:port`, `[v6]:port`, `unix:///abs`, `unix:rel`, `dns:///host:port`); anything else, notably
// `http(s)://`, is refused with InvalidArgument before any socket is touched.
import { invalidArgument } from "../errors/index.js";

export type Address =
  | { readonly kind: "tcp"; readonly host: string; readonly port: number; readonly target: string }
  | { readonly kind: "unix"; readonly path: string; readonly target: string };

const MAX_PORT = 65_535;

export function parseAddress(addr: string): Address {
  const raw = addr.trim();
  if (raw.startsWith("unix:")) return parseUnix(raw);
  if (raw.startsWith("dns:")) {
    const rest = raw.startsWith("dns:///") ? raw.slice("dns:///".length) : undefined;
    if (rest === undefined) throw invalidArgument(badAddress(addr, "dns targets must be dns:///host:port"));
    return parseHostPort(rest, addr);
  }
  const scheme = /^([a-z][a-z0-9+.-]*):(.*)$/i.exec(raw);
  if (scheme !== null && !/^[0-9]+$/.test(scheme[2] ?? ""))
    throw invalidArgument(badAddress(addr, "unsupported scheme"));
  return parseHostPort(raw, addr);
}

/** The same address with a resolved TCP port (port 0 after bind); unix addresses are unchanged. */
export function withPort(a: Address, port: number): Address {
  switch (a.kind) {
    case "tcp":
      return { kind: "tcp", host: a.host, port, target: hostPort(a.host, port) };
    case "unix":
      return a;
    default: {
      const exhaustive: never = a;
      throw new Error(`unknown address ${String(exhaustive)}`);
    }
  }
}

function parseUnix(raw: string): Address {
  let path: string;
  if (raw.startsWith("unix://")) {
    path = raw.slice("unix://".length);
    if (!path.startsWith("/"))
      throw invalidArgument(badAddress(raw, "unix:// needs an absolute path (unix:///abs/path)"));
  } else {
    path = raw.slice("unix:".length);
  }
  if (path === "" || path.includes("\0")) throw invalidArgument(badAddress(raw, "empty or malformed unix socket path"));
  const target = path.startsWith("/") ? `unix://${path}` : `unix:${path}`;
  return { kind: "unix", path, target };
}

function parseHostPort(text: string, original: string): Address {
  let host: string;
  let portText: string;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close < 0 || text[close + 1] !== ":") throw invalidArgument(badAddress(original, "expected [v6]:port"));
    host = text.slice(1, close);
    portText = text.slice(close + 2);
    if (!/^[0-9a-f:.%a-z]+$/i.test(host) || !host.includes(":"))
      throw invalidArgument(badAddress(original, "bad IPv6 host"));
  } else {
    const colon = text.lastIndexOf(":");
    if (colon < 0) throw invalidArgument(badAddress(original, "expected host:port"));
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (host.includes(":")) throw invalidArgument(badAddress(original, "IPv6 hosts must be bracketed: [v6]:port"));
    if (!/^[A-Za-z0-9.-]+$/.test(host)) throw invalidArgument(badAddress(original, "bad host"));
  }
  if (!/^[0-9]{1,5}$/.test(portText)) throw invalidArgument(badAddress(original, "bad port"));
  const port = Number(portText);
  if (port > MAX_PORT) throw invalidArgument(badAddress(original, "port out of range"));
  return { kind: "tcp", host, port, target: hostPort(host, port) };
}

function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The message of a malformed address: the address as given, then what is wrong with it. */
function badAddress(addr: string, why: string): string {
  return `address ${JSON.stringify(addr)}: ${why}`;
}
