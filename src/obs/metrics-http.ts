// The Prometheus scrape endpoint (docs/operations.md, "Metrics"). Invariants: it answers only
// `GET /metrics` (and HEAD) with the host's exposition text, 404 for other paths and 405 for other
// methods; it reads metrics and never changes anything; the handler is a plain node:http request
// listener, so the same function can be mounted on another HTTP server (the console's) unchanged.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { HostMetrics } from "./metrics.js";

export const METRICS_PATH = "/metrics";

/** Handles one request if it is for METRICS_PATH; returns false (untouched) for any other path. */
export function metricsHandler(metrics: HostMetrics): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== METRICS_PATH) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("method not allowed\n");
      return true;
    }
    metrics.render().then(
      (text) => {
        res.writeHead(200, { "content-type": metrics.contentType });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      () => {
        res.writeHead(500, { "content-type": "text/plain" }).end("metrics collection failed\n");
      },
    );
    return true;
  };
}

export interface MetricsServer {
  /** host:port actually bound (port 0 resolved). */
  readonly addr: string;
  close(): Promise<void>;
}

/** Splits `host:port` (`[::1]:9464` for IPv6); the port may be 0. */
export function parseHostPort(addr: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(addr);
  const port = Number(m?.[3]);
  if (!m || port > 65_535) throw new Error(`expected HOST:PORT, got ${JSON.stringify(addr)}`);
  return { host: m[1] ?? m[2] ?? "", port };
}

/** Serves METRICS_PATH on its own listener (`--metrics-addr`). */
export async function serveMetrics(addr: string, metrics: HostMetrics): Promise<MetricsServer> {
  const { host, port } = parseHostPort(addr);
  const handle = metricsHandler(metrics);
  const server: Server = createServer((req, res) => {
    if (!handle(req, res)) res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  return {
    addr: `${bound.family === "IPv6" ? `[${bound.address}]` : bound.address}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
