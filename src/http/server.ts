// The HTTP listener: the Connect protocol (Connect JSON/binary and gRPC-Web over HTTP/1.1) for the
// services the caller routes, and the console's static files at `/`. Invariants: the address passed
// the listen policy before this runs (server/listen-policy.ts); on a listener that is not secured by
// TLS + token, a request whose Host is not a loopback name is refused (a web page that rebinds a DNS
// name to 127.0.0.1 cannot reach the API), and on every listener a request whose Origin is not this
// listener's own is refused (no CORS: the console is same-origin, nothing else is allowed in); close()
// stops accepting, lets in-flight calls finish for the grace period, then cancels them and drops the
// connections. /metrics (when the host counts metrics) needs the same bearer token as the API whenever
// the host has tokens: it is refused 401/403 before anything is read. An RPC path answers POST only
// (405 to anything else, a Connect GET's query included, before it is read), and a request body is
// checked before connect-node decodes it and a compressed message decompressed once (decode-bound.ts).
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { type ConnectRouter, createConnectRouter, type Interceptor } from "@connectrpc/connect";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { ErrorCode, HostError } from "../errors/index.js";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { METRICS_PATH } from "../obs/metrics-http.js";
import type { AuthRefusal, BearerAuth } from "../server/auth.js";
import { isLoopbackLiteral } from "../server/listen-policy.js";
import { type DecodeBound, parseAddress } from "../wire/index.js";
import type { ConsoleAssets } from "./assets.js";
import { boundedRequest, countingDecompressions } from "./decode-bound.js";

export interface HttpListenerOptions {
  /** host:port, already checked by checkListenAddresses. */
  readonly addr: string;
  /** TLS and a bearer token are both configured (any Host may then be used). */
  readonly secured: boolean;
  readonly tls?: { readonly cert: Buffer | string; readonly key: Buffer | string };
  readonly interceptors: readonly Interceptor[];
  /** Largest request message accepted, encoded and after decompression (limit requestBytes). */
  readonly requestBytes: number;
  readonly routes: (router: ConnectRouter) => void;
  /**
   * The requestMessages bound and the services (type names) it applies to, checked on a request's
   * bytes before connect-node decodes them (decode-bound.ts), as the gRPC listener does.
   */
  readonly decodeBound?: { readonly bound: DecodeBound; readonly services: ReadonlySet<string> };
  readonly assets?: ConsoleAssets;
  /**
   * Serves the Prometheus scrape at /metrics (src/obs/metrics-http.ts) behind `auth` — the Sessions
   * API's bearer tokens — when the host has tokens; the listener's Host and Origin checks apply first.
   */
  readonly metrics?: { readonly handle: MetricsHandler; readonly auth?: BearerAuth };
}

/** A request listener that answers its own path and returns false for any other. */
export type MetricsHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/** HTTP status of an auth refusal: 401 (no or malformed credentials, with a challenge) or 403 (wrong token). */
function refuseAuth(res: ServerResponse, refusal: AuthRefusal): void {
  const unauthenticated = refusal.code === GrpcStatus.UNAUTHENTICATED;
  res.writeHead(unauthenticated ? 401 : 403, {
    "content-type": "text/plain; charset=utf-8",
    "x-content-type-options": "nosniff",
    ...(unauthenticated ? { "www-authenticate": 'Bearer realm="harnesshost"' } : {}),
  });
  res.end(`${refusal.details}\n`);
}

export interface RunningHttp {
  /** The console URL, e.g. http://127.0.0.1:7235/ (port 0 resolved). */
  readonly url: string;
  close(graceMs: number): Promise<void>;
}

/** The hostname of a Host header ("[::1]:7235" → "::1"), or undefined when malformed. */
function hostnameOf(host: string | undefined): string | undefined {
  if (host === undefined || host === "") return undefined;
  try {
    const name = new URL(`http://${host}`).hostname;
    return name.startsWith("[") ? name.slice(1, -1) : name;
  } catch {
    return undefined;
  }
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" });
  res.end(`${message}\n`);
}

/** Why a request may not enter, or undefined when it may. */
export function entryRefusal(req: IncomingMessage, secured: boolean, scheme: "http" | "https"): string | undefined {
  const host = req.headers.host;
  const name = hostnameOf(host);
  if (name === undefined) return "missing or malformed Host header";
  if (!secured && name !== "localhost" && !isLoopbackLiteral(name)) {
    return `Host ${JSON.stringify(host)} is not a loopback name; this listener serves loopback only (configure TLS and a token to serve others)`;
  }
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `${scheme}://${host}`) {
    return `cross-origin requests are not allowed (Origin ${JSON.stringify(origin)})`;
  }
  return undefined;
}

export async function startHttp(opts: HttpListenerOptions): Promise<RunningHttp> {
  const address = parseAddress(opts.addr);
  if (address.kind !== "tcp") throw new HostError(ErrorCode.InvalidArgument, `--http-addr must be host:port`);
  const shutdown = new AbortController();
  const scheme = opts.tls ? "https" : "http";
  // connect-node's adapter (connectNodeAdapter), with every request passed through boundedRequest
  // (one message, requestBytes, and requestMessages for the bounded services; a message it decompressed
  // handed on decompressed): connect-node offers no hook between reading a body and decoding it.
  const router = createConnectRouter({
    interceptors: [...opts.interceptors],
    readMaxBytes: opts.requestBytes,
    shutdownSignal: shutdown.signal,
    acceptCompression: [countingDecompressions(compressionGzip), countingDecompressions(compressionBrotli)],
  });
  opts.routes(router);
  const paths = new Map<string, UniversalHandler>(router.handlers.map((h) => [h.requestPath, h]));
  const connect = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const handler = paths.get(path);
    if (handler === undefined) {
      if ((req.method === "GET" || req.method === "HEAD") && opts.assets?.serve(req, res, path)) return;
      refuse(res, 404, `no such path ${JSON.stringify(path.slice(0, 200))}`);
      return;
    }
    if (req.method !== "POST") {
      // No message arrives in a query string (Connect GET): refused before anything of it is read.
      res.setHeader("allow", "POST");
      refuse(res, 405, `${path.slice(0, 200)} answers POST only (docs/operations.md, "The HTTP listener")`);
      return;
    }
    const uReq = universalRequestFromNodeRequest(req, res, undefined, undefined);
    const bound = opts.decodeBound;
    const messages = bound?.services.has(handler.service.typeName) ? bound.bound : undefined;
    const raw = uReq.body;
    const bounded =
      typeof raw !== "object" || raw === null || !(Symbol.asyncIterator in raw)
        ? Promise.resolve(uReq)
        : boundedRequest(raw as AsyncIterable<Uint8Array>, uReq.header, {
            method: handler.method,
            requestBytes: opts.requestBytes,
            ...(messages ? { messages } : {}),
          }).then(({ header, body }) => ({ ...uReq, header, body }));
    bounded
      .then((req) => handler(req))
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      // A failure writing the response is the client gone or the connection reset: nothing to answer.
      .catch(() => res.destroy());
  };
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const refusal = entryRefusal(req, opts.secured, scheme);
    if (refusal !== undefined) {
      refuse(res, 403, refusal);
      return;
    }
    if (opts.metrics !== undefined && (req.url ?? "/").split("?")[0] === METRICS_PATH) {
      const denied = opts.metrics.auth?.checkHeader(req.headers.authorization);
      if (denied !== undefined) refuseAuth(res, denied);
      else opts.metrics.handle(req, res);
      return;
    }
    connect(req, res);
  };
  const server: Server = opts.tls
    ? createHttpsServer({ cert: opts.tls.cert, key: opts.tls.key }, handler)
    : createHttpServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err) =>
      reject(new HostError(ErrorCode.Unavailable, `cannot listen on ${opts.addr}: ${err.message}`, { cause: err })),
    );
    server.listen({ host: address.host, port: address.port }, () => resolve());
  });
  server.on("error", () => undefined);
  const port = (server.address() as AddressInfo).port;
  const host = address.host.includes(":") ? `[${address.host}]` : address.host;
  let closing: Promise<void> | undefined;
  return {
    url: `${scheme}://${host}:${port}/`,
    close(graceMs) {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          shutdown.abort(new HostError(ErrorCode.Unavailable, "the host is shutting down"));
          server.closeAllConnections();
        }, graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
